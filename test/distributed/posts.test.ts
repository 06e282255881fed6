// Tasks a lead posts on a run over two hosts: the post goes from the host's worker through Redis to the coordinator's board.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

describe("posted tasks on two hosts", () => {
  it("three posts under max_posted_tasks: 3 run as tasks of the run on the hosts; the fourth is a tool error the lead sees", async () => {
    const redis = await startRedis();
    const post = (n: number) => ({
      tool_use: { name: "mcp__cadre__post_task", input: { name: `fix-${n}`, agent: "fixer", prompt: `fix module ${n}` } },
    });
    const model = await createRehearsal({
      lead: [
        post(1),
        post(2),
        post(3),
        post(4),
        { tool_use: { name: "mcp__cadre__wait_tasks", input: { names: ["fix-1", "fix-2", "fix-3"] } } },
        { text: "all: {{tool_result}}" },
      ],
      fixer: [{ text: "done: {{prompt}}", delay_ms: 500 }],
    });
    await startHost(redis, model, { name: "a", script: "lead", concurrency: 2 });
    await startHost(redis, model, { name: "b", script: "lead", concurrency: 2 });
    const fixerUrl = JSON.stringify(model.baseUrlFor("fixer"));
    const file = await swarmFile([
      "name: posting",
      "concurrency: 4",
      "max_posted_tasks: 3",
      `agents: { fixer: { description: fixes, prompt: You fix., env: { ANTHROPIC_BASE_URL: ${fixerUrl} } } }`,
      "tasks: [{ name: lead, prompt: find the work, post_tasks: true }]",
    ]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null])).toEqual([
      ["lead", "succeeded", null],
      ["fix-1", "succeeded", "lead"],
      ["fix-2", "succeeded", "lead"],
      ["fix-3", "succeeded", "lead"],
    ]);
    for (const task of summary.tasks) expect(["a", "b"]).toContain(task.host);
    // Counted at the model: each posted task answered once; the fourth never ran.
    const fixes = model.requests.filter((r) => r.script === "fixer" && r.outcome === "played");
    expect(fixes.map((r) => JSON.stringify(r.messages[0]?.content).match(/fix module \d/)?.[0]).sort()).toEqual([
      "fix module 1",
      "fix module 2",
      "fix module 3",
    ]);
    // The lead read the refusal of its fourth post, and the three results it waited for.
    const last = model.requests.filter((r) => r.script === "lead").at(-1)!;
    const results = last.messages.flatMap((m) =>
      Array.isArray(m.content) ? (m.content as { type: string; is_error?: boolean; content: unknown }[]).filter((b) => b.type === "tool_result") : [],
    );
    expect(results.map((r) => r.is_error ?? false)).toEqual([false, false, false, true, false]);
    expect(JSON.stringify(results[3]!.content)).toContain("max_posted_tasks (3)");
    expect(summary.tasks[0]!.text).toContain("done: fix module 2");
  }, 120_000);
});
