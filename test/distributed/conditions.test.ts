// when: under `cadre run --redis`: the coordinator decides each condition, the hosts run only what it starts.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

describe("cadre run --redis: when:", () => {
  it("a router's excluded branch is skipped with its reason and never reaches a host; the chosen one runs on one", async () => {
    const redis = await startRedis();
    // One script for every worker of the hosts: the triager answers in its schema; the other tasks have no
    // StructuredOutput tool, so the CLI answers that call with an error and they end with the text.
    const model = await createRehearsal({
      route: [{ tool_use: { name: "StructuredOutput", input: { kind: "bug" } } }, { text: "done: {{prompt}}" }],
    });
    await startHost(redis, model, { name: "a", script: "route" });
    await startHost(redis, model, { name: "b", script: "route" });
    const file = await swarmFile([
      "agents:",
      "  triager:",
      "    description: Sorts issues",
      "    prompt: You sort issues.",
      "    output_schema: { type: object, properties: { kind: { type: string, enum: [bug, question] } }, required: [kind] }",
      "tasks:",
      "  - { name: triage, agent: triager, prompt: Sort this issue }",
      "  - { name: fixer, prompt: Fix it, depends_on: [triage], when: 'results.triage.structured.kind == \"bug\"' }",
      "  - { name: answerer, prompt: Answer it, depends_on: [triage], when: 'results.triage.structured.kind == \"question\"' }",
      "  - { name: report, prompt: Report, depends_on: [fixer], when: failure() }",
    ]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.error?.message ?? null])).toEqual([
      ["triage", "succeeded", null],
      ["fixer", "succeeded", null],
      ["answerer", "skipped", 'when: results.triage.structured.kind == "question" was false'],
      ["report", "skipped", "when: failure() was false"],
    ]);
    expect(summary.tasks[1]?.text).toBe("done: Fix it");
    expect(["a", "b"]).toContain(summary.tasks[1]?.host);
    expect(summary.tasks[2]).toMatchObject({ host: null, session_id: null, num_turns: 0 });
    // Measured at the model: the skipped tasks sent nothing.
    const prompts = model.requests.filter((r) => r.outcome === "played").map((r) => JSON.stringify(r.messages[0]?.content ?? ""));
    expect(prompts.filter((p) => p.includes("Answer it") || p.includes("Report"))).toEqual([]);
    expect(prompts.filter((p) => p.includes("Fix it")).length).toBeGreaterThan(0);
  }, 120_000);
});
