// The record of a distributed run lists the sessions beside the tasks (peers, children) that worked on the hosts.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSummary } from "../cli/run-support.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "./support.ts";

describe("the record of a distributed run", () => {
  it("lists the peers and children of the hosts' workers, with their host, cost and transcript; the totals are their sum", async () => {
    const redis = await startRedis();
    // Under --rehearse each host plays the config's scripts; this server only has to exist.
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    await startHost(redis, model, { name: "only-host", script: "unused" });
    const file = await swarmFile([
      "name: records",
      "concurrency: 1",
      "agents:",
      "  critic: { description: judges plans, prompt: You are the critic. }",
      "tasks:",
      "  - { name: lead, prompt: plan and count }",
      "rehearsal:",
      "  lead:",
      "    - tool_use: { name: mcp__cadre__ask_peer, input: { peer: critic, question: Sound? } }",
      "    - tool_use: { name: mcp__cadre__spawn_worker, input: { prompt: count the widgets } }",
      "    - text: all done",
      "  lead/child: [{ text: 7 widgets }]",
      "  peer:critic: [{ text: sound enough }]",
    ]);
    const out = join(await tempHome("cadre-out-"), "run");
    const run = await runDistributed(file, redis, out, ["--rehearse"]);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);

    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.host])).toEqual([["lead", "succeeded", "only-host"]]);
    expect(summary.sessions.map((s) => [s.role, s.name, s.parent, s.host]).sort()).toEqual([
      ["child", "lead/child", "lead", "only-host"],
      ["peer", "peer:critic", "lead", "only-host"],
    ]);
    for (const session of summary.sessions) {
      expect(session.session_id, session.name).toMatch(/^[0-9a-f-]{36}$/);
      expect(session.cost_usd, session.name).toBeGreaterThan(0);
    }
    // The child is a task on its host: its messages reach the coordinator, which writes its transcript.
    expect(summary.sessions.find((s) => s.role === "child")?.transcript).toMatch(/^transcripts\/.+\.jsonl$/);
    // The run's cost, counted once in Redis, is what the task and its sessions spent.
    const listed = summary.tasks[0]!.cost_usd + summary.sessions.reduce((sum, s) => sum + s.cost_usd, 0);
    expect(summary.totals.cost_usd).toBeCloseTo(listed, 9);
  }, 120_000);
});
