// `when:` through the real command line (`cadre run --rehearse`, real claude workers against the scripted model):
// a router skips exactly the branch its verdict excludes, a failure handler runs only on a failure, and
// `cadre validate` reports every mistake in the conditions before anything runs.
import { describe, expect, it } from "vitest";
import { cadre, readSummary, swarmFolder } from "../support/cli.ts";

const folder = swarmFolder("cadre-when-");
const config = folder.config;

const TRIAGER = [
  "agents:",
  "  triager:",
  "    description: Sorts issues",
  "    prompt: You sort issues.",
  "    output_schema: { type: object, properties: { kind: { type: string, enum: [bug, question] } }, required: [kind] }",
];

describe("cadre run: when:", () => {
  it("a router skips exactly the branch its verdict excludes, and that branch's dependants, with the reason on record", async () => {
    const file = await config("route.yaml", [
      ...TRIAGER,
      "tasks:",
      "  - { name: triage, agent: triager, prompt: Sort this issue }",
      "  - { name: fixer, prompt: Fix it, depends_on: [triage], when: 'results.triage.structured.kind == \"bug\"' }",
      "  - { name: answerer, prompt: 'Answer: {{results.triage.text}}', depends_on: [triage], when: 'results.triage.structured.kind == \"question\"' }",
      "  - { name: verify, prompt: 'Check {{results.fixer}}', depends_on: [fixer] }",
      "rehearsal:",
      "  triage: [{ tool_use: { name: StructuredOutput, input: { kind: question } } }]",
      "  fixer: [{ text: fixed }]",
      "  answerer: [{ text: 'answered: {{prompt}}' }]",
      "  verify: [{ text: verified }]",
    ]);
    const out = folder.path("route-out");
    const run = await cadre(["run", file, "--rehearse", "--json", "--out", out]);
    // Skipped on purpose is not a failure: the run succeeds.
    expect(run.exitCode, run.stderr).toBe(0);

    const summary = await readSummary(out);
    expect(summary.exit_code).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status, t.error])).toEqual([
      ["triage", "succeeded", null],
      ["fixer", "skipped", { code: "CONDITION_FALSE", message: 'when: results.triage.structured.kind == "bug" was false' }],
      ["answerer", "succeeded", null],
      ["verify", "skipped", { code: "DEPENDENCY_SKIPPED", message: 'dependency "fixer" skipped' }],
    ]);
    expect(summary.tasks[1]?.when).toBe('results.triage.structured.kind == "bug"');
    expect(summary.tasks[2]?.text).toBe('answered: Answer: {"kind":"question"}');
    // The skipped tasks never reached the model: no session, no turns, no transcript.
    for (const skipped of [summary.tasks[1]!, summary.tasks[3]!]) {
      expect(skipped).toMatchObject({ session_id: null, num_turns: 0, transcript: null, cost_usd: 0, started_at: null });
    }
    expect(summary.totals).toMatchObject({ tasks: 4, succeeded: 2, skipped: 2, failed: 0 });

    // --json: the skip and its reason are in the task_settled event.
    const settled = run.stdout
      .split("\n")
      .filter((line) => line.includes('"task_settled"'))
      .map((line) => JSON.parse(line) as { task: { name: string }; started: boolean; result: { status: string; error?: unknown } });
    expect(settled.find((event) => event.task.name === "fixer")).toMatchObject({
      started: false,
      result: { status: "skipped", error: { code: "CONDITION_FALSE", message: 'when: results.triage.structured.kind == "bug" was false' } },
    });
  });

  it("a failure handler (when: failure()) runs only when what it follows failed, also past a skipped task", async () => {
    const file = await config("handlers.yaml", [
      "tasks:",
      "  - { name: steady, prompt: Work }",
      "  - { name: shaky, prompt: Work }",
      "  - { name: after-shaky, prompt: 'Use {{results.shaky}}', depends_on: [shaky] }",
      "  - { name: report-steady, prompt: Report, depends_on: [steady], when: failure() }",
      "  - { name: report-shaky, prompt: 'Report {{results.shaky.text}}', depends_on: [shaky], when: 'failure() && results.shaky.status == \"failed\"' }",
      "  - { name: report-chain, prompt: Report, depends_on: [after-shaky], when: failure() }",
      "  - { name: judge, prompt: Judge, output_schema: { type: object, properties: { ok: { type: boolean } } } }",
      "  - { name: on-verdict, prompt: Act, depends_on: [judge], when: 'always() && results.judge.structured.ok' }",
      "rehearsal:",
      "  steady: [{ text: done }]",
      "  shaky: [{ text: never, fail: { status: 400, times: 3, message: scripted outage } }]",
      "  after-shaky: [{ text: never }]",
      "  report-steady: [{ text: never }]",
      "  report-shaky: [{ text: reported the outage }]",
      "  report-chain: [{ text: reported upstream }]",
      "  judge: [{ text: never, fail: { status: 400, times: 3, message: scripted outage } }]",
      "  on-verdict: [{ text: never }]",
    ]);
    const out = folder.path("handlers-out");
    const run = await cadre(["run", file, "--rehearse", "--out", out]);
    // A task failed, so the run did, though its handler ran.
    expect(run.exitCode, run.stderr).toBe(1);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => [t.name, t.status, t.error?.code ?? null])).toEqual([
      ["steady", "succeeded", null],
      ["shaky", "failed", "TASK_FAILED"],
      ["after-shaky", "skipped", "DEPENDENCY_FAILED"],
      ["report-steady", "skipped", "CONDITION_FALSE"],
      ["report-shaky", "succeeded", null],
      ["report-chain", "succeeded", null],
      ["judge", "failed", "TASK_FAILED"],
      // A condition that cannot be evaluated (the failed judge left no structured output) fails its task, and says why.
      ["on-verdict", "failed", "CONDITION_FAILED"],
    ]);
    expect(summary.tasks[7]?.error?.message).toBe("when: always() && results.judge.structured.ok: No such key: structured");
    expect(summary.tasks[3]?.error?.message).toBe("when: failure() was false");
    expect(summary.tasks[4]?.text).toBe("reported the outage");
    expect(summary.tasks[3]).toMatchObject({ session_id: null, transcript: null, num_turns: 0 });
    expect(run.stdout).toContain("report-steady: skipped: when: failure() was false");
  });
});

describe("cadre run --resume: when:", () => {
  it("evaluates the conditions again: a task skipped before runs, one that ran is skipped, a kept result is not rerun", async () => {
    const lines = (bug: string, question: string) => [
      ...TRIAGER,
      "tasks:",
      "  - { name: triage, agent: triager, prompt: Sort this issue }",
      `  - { name: fixer, prompt: Fix it, depends_on: [triage], when: '${bug}' }`,
      `  - { name: answerer, prompt: Answer it, depends_on: [triage], when: '${question}' }`,
      "rehearsal:",
      "  triage: [{ tool_use: { name: StructuredOutput, input: { kind: question } } }]",
      "  fixer: [{ text: fixed }]",
      "  answerer: [{ text: answered }]",
    ];
    const file = await config("resume-route.yaml", lines('results.triage.structured.kind == "bug"', 'results.triage.structured.kind == "question"'));
    const out = folder.path("resume-route-out");
    expect((await cadre(["run", file, "--rehearse", "--out", out])).exitCode).toBe(0);
    expect((await readSummary(out)).tasks.map((t) => t.status)).toEqual(["succeeded", "skipped", "succeeded"]);

    // The conditions are edited, the run resumed: triage's result stands, and the branches swap.
    await config("resume-route.yaml", lines('results.triage.structured.kind != "bug"', 'results.triage.structured.kind != "question"'));
    const resumed = await cadre(["run", file, "--rehearse", "--resume", out]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("triage: carried over from the resumed run (succeeded)");
    expect(resumed.stdout).toContain("fixer: runs again, it was skipped before");
    const summary = await readSummary(out);
    expect(summary.attempt).toBe(2);
    expect(summary.tasks.map((t) => [t.name, t.status, t.carried_over ?? false])).toEqual([
      ["triage", "succeeded", true],
      ["fixer", "succeeded", false],
      ["answerer", "skipped", false],
    ]);
    expect(summary.tasks[2]?.error?.message).toBe('when: results.triage.structured.kind != "question" was false');
  });
});

describe("cadre validate: when:", () => {
  it("reports a misspelt result field, a syntax error and a non-dependency reference in one pass, with paths", async () => {
    const file = await config("bad-when.yaml", [
      ...TRIAGER,
      "tasks:",
      "  - { name: triage, agent: triager, prompt: Sort this issue }",
      "  - { name: other, prompt: p }",
      "  - { name: fixer, prompt: p, depends_on: [triage], when: 'results.triage.structured.kidn == \"bug\"' }",
      "  - { name: answerer, prompt: p, depends_on: [triage], when: 'results.triage.structured.kind == \"question\" &&' }",
      "  - { name: closer, prompt: p, depends_on: [triage], when: 'results.other.status == \"succeeded\"' }",
    ]);
    const run = await cadre(["validate", file]);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.split("\n")).toEqual([
      'tasks[2].when: results.triage.structured.kidn: its output_schema has no field "kidn" (did you mean "kind"?)',
      "tasks[3].when: not a valid expression: Unexpected token: EOF (it ends too soon)",
      'tasks[4].when: results.other.status: "other" is not a dependency of this task (add "other" to its depends_on)',
      `cadre validate: ${file} is not valid (3 problems)`,
    ]);
    // `run` checks the same before starting anything.
    const refused = await cadre(["run", file, "--rehearse", "--out", folder.path("never")]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('tasks[2].when: results.triage.structured.kidn: its output_schema has no field "kidn"');
  });
});
