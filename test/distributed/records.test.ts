// The record of a distributed run lists the sessions beside the tasks (peers, children) that worked on the hosts.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cadre, readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

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
  it("a map over a result and a loop give the same record on two hosts as in one process", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    await startHost(redis, model, { name: "host-a", script: "unused" });
    await startHost(redis, model, { name: "host-b", script: "unused" });
    const file = await swarmFile([
      "name: decided-at-run-time",
      "concurrency: 2",
      "tasks:",
      "  - name: plan",
      "    prompt: plan",
      "    output_schema: { type: object, properties: { files: { type: array } }, required: [files] }",
      "  - { name: fix, depends_on: [plan], for_each: '{{results.plan.structured.files}}', prompt: 'Fix {{item}}' }",
      "  - { name: merge, depends_on: [fix], prompt: 'Merge {{results.fix}}' }",
      "  - { name: write, depends_on: [merge], prompt: 'Write' }",
      "  - name: review",
      "    depends_on: [write]",
      "    prompt: 'Review {{results.write}}'",
      "    output_schema: { type: object, properties: { ok: { type: boolean } }, required: [ok] }",
      "loops:",
      // A session lives on the host that ran it: rounds that may land on either host start fresh.
      "  - { tasks: [write, review], until: results.review.structured.ok, max_rounds: 3, fresh: true }",
      "rehearsal:",
      "  plan: [{ tool_use: { name: StructuredOutput, input: { files: [a.ts, b.ts, c.ts] } } }]",
      "  fix: [{ text: 'fixed: {{prompt}}' }]",
      "  merge: [{ text: 'merged' }]",
      "  write#1: [{ text: draft one }]",
      "  write#2: [{ text: draft two }]",
      "  review#1: [{ tool_use: { name: StructuredOutput, input: { ok: false } } }]",
      "  review#2: [{ tool_use: { name: StructuredOutput, input: { ok: true } } }]",
    ]);
    const home = await tempHome("cadre-out-");
    const run = await runDistributed(file, redis, join(home, "hosts"), ["--rehearse"]);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const here = await cadre(["run", file, "--rehearse", "--out", join(home, "here")]);
    expect(here.exitCode, here.stderr).toBe(0);

    const shape = (summary: Awaited<ReturnType<typeof readSummary>>) => ({
      tasks: summary.tasks.map(({ name, status, text, structured_output, item, copy_of, copies, round, rounds }) => ({
        name,
        status,
        text,
        structured_output,
        item,
        copy_of,
        copies,
        round,
        rounds,
      })),
      loops: summary.loops,
    });
    const hosts = await readSummary(join(home, "hosts"));
    expect(shape(hosts)).toEqual(shape(await readSummary(join(home, "here"))));
    expect(hosts.tasks.map((t) => t.name)).toEqual([
      "plan",
      "fix",
      "fix-0",
      "fix-1",
      "fix-2",
      "merge",
      "write",
      "write#1",
      "write#2",
      "review",
      "review#1",
      "review#2",
    ]);
    expect(hosts.loops).toMatchObject([{ status: "succeeded", rounds: 2 }]);
    // The hosts ran the copies and rounds: each row that ran names its host.
    expect(new Set(hosts.tasks.filter((t) => t.copy_of !== undefined || t.round !== undefined).map((t) => t.host))).not.toContain(null);
  }, 240_000);
});
