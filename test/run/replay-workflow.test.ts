// Replay of a workflow script on the real claude CLI: a run recorded against the scripted model, played again from its
// replies.jsonl and the copy of its script it kept (no rehearsal scripts anywhere), from a test checkout; a tool's
// changed output diverges at its agent and turn; an override sends the loop round once more; budgets count recorded costs.
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRehearsalScripts, replayWorkflow, runWorkflow, type WorkflowRunResult, type WorkflowSummary } from "../../src/index.ts";
import { bin } from "../support/cli.ts";

/** A writer drafts from notes.txt (a Bash tool), a reviewer approves or asks again, in rounds: the script's own loop. */
const SCRIPT = `export const meta = { name: "draft-loop", description: "Draft from notes, review until approved", phases: [{ title: "Draft" }] }
const VERDICT = { type: "object", properties: { approved: { type: "boolean" }, notes: { type: "string" } }, required: ["approved", "notes"] }
phase("Draft")
let draft = await agent("Read notes.txt and draft a release note from it.", { label: "write" })
let rounds = 1
for (;;) {
  const verdict = await agent(\`Review this note: \${draft}\`, { label: "review", schema: VERDICT })
  if (verdict.approved || rounds >= args.maxRounds) break
  draft = await agent(\`Revise the note: \${verdict.notes}\\n\${draft}\`, { label: "write" })
  rounds++
}
log(\`approved after \${rounds} rounds\`)
return { rounds, draft }
`;

const REHEARSAL = `write:
  - tool_use: { name: Bash, input: { command: cat notes.txt, description: Read the notes } }
  - text: "Draft: {{tool_result}}"
write#2:
  - text: "Loops run until the reviewer approves."
review:
  - tool_use: { name: StructuredOutput, input: { approved: false, notes: "Say what a loop does." } }
  - text: reviewed
review#2:
  - tool_use: { name: StructuredOutput, input: { approved: true, notes: "Good." } }
  - text: reviewed
`;

/** Four agents, one after another, each a claude process; a busy machine makes that slow. */
const RUN_MS = 180_000;

/** What a replay must give again: each agent's row and the script's outcome. */
const rows = (summary: WorkflowSummary) => summary.tasks.map((row) => [row.name, row.status, row.text, row.result]);

describe("replay of a workflow script", () => {
  let tmp: string;
  let recorded: string;
  let checkout: string;
  let original: WorkflowRunResult;
  beforeAll(async () => {
    tmp = await realpath(await mkdtemp(join(tmpdir(), "cadre-replay-workflow-")));
    const tree = join(tmp, "original");
    await mkdir(tree);
    await writeFile(join(tree, "draft.js"), SCRIPT);
    await writeFile(join(tree, "notes.txt"), "loops are here\n");
    recorded = join(tmp, "recorded");
    original = await runWorkflow(SCRIPT, {
      outDir: recorded,
      file: join(tree, "draft.js"),
      cwd: tree,
      args: { maxRounds: 4 },
      rehearsal: loadRehearsalScripts(REHEARSAL),
    });
    // A test checkout: the project's files, not the script (the run kept its copy) nor any scripted replies.
    checkout = join(tmp, "checkout");
    await mkdir(checkout);
    await cp(join(tree, "notes.txt"), join(checkout, "notes.txt"));
    // The recorded script changes after the run: the replay runs the copy the run kept.
    await writeFile(join(tree, "draft.js"), SCRIPT.replace("rounds >= args.maxRounds", "true"));
  }, RUN_MS);
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it("cadre replay RUN-DIR gives the same agents, texts, rounds and result from the record alone, at no cost", { timeout: RUN_MS }, async () => {
    expect(original.exitCode, JSON.stringify(original.summary.error)).toBe(0);
    expect(original.summary.result).toEqual({ rounds: 2, draft: "Loops run until the reviewer approves." });
    expect(await readFile(join(recorded, "workflow.js"), "utf8")).toBe(SCRIPT);

    // From the recorded run's own tree, a replay is refused: its tools would run there, for real.
    const refused = await execa("node", [bin, "replay", recorded], { cwd: join(tmp, "original"), reject: false });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("--in-place");

    const out = join(tmp, "replay");
    const run = await execa("node", [bin, "replay", recorded, "--out", out], { cwd: checkout, reject: false });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(`replaying run ${original.summary.run_id}`);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as WorkflowSummary;
    expect(rows(summary)).toEqual(rows(original.summary));
    expect(summary.tasks.map((row) => row.name)).toEqual(["write", "review", "write#2", "review#2"]);
    expect(summary.result).toEqual(original.summary.result);
    expect(summary.logs).toEqual(["approved after 2 rounds"]);
    expect(summary.workflow.args).toEqual({ maxRounds: 4 });
    expect(summary.replay).toEqual({ of: { run_id: original.summary.run_id, dir: recorded }, divergences: [] });
    expect(summary.cost_simulated).toBe(true);
  });

  it("a tool whose output changed in the checkout stops its agent at that turn, named by its row", { timeout: RUN_MS }, async () => {
    const changed = join(tmp, "changed");
    await cp(checkout, changed, { recursive: true });
    await writeFile(join(changed, "notes.txt"), "loops are gone\n");
    const replay = await replayWorkflow(recorded, { outDir: join(tmp, "replay-changed"), cwd: changed });
    expect(replay.exitCode).toBe(1);
    expect(replay.summary.replay?.divergences[0]).toMatchObject({
      script: "write",
      step: 1,
      kind: "tool_result",
      expected: expect.stringContaining("loops are here"),
      got: expect.stringContaining("loops are gone"),
    });
    expect(replay.summary.tasks[0]).toMatchObject({
      name: "write",
      status: "failed",
      error: expect.objectContaining({ message: expect.stringContaining("replay diverged: write, turn 1") }),
    });
  });

  it("an override makes the reviewer reject once more: the script's loop goes round a third time", { timeout: RUN_MS }, async () => {
    const overrides = join(tmp, "overrides.yaml");
    await writeFile(
      overrides,
      [
        "review#2:",
        "  0: { tool_use: { name: StructuredOutput, input: { approved: false, notes: 'Shorter.' } } }",
        "write#3:",
        "  0: { text: 'Loops repeat.' }",
        "review#3:",
        "  0: { tool_use: { name: StructuredOutput, input: { approved: true, notes: 'Good.' } } }",
      ].join("\n"),
    );
    const edited = await replayWorkflow(recorded, { outDir: join(tmp, "edited"), cwd: checkout, overrides });
    expect(edited.exitCode, JSON.stringify(edited.summary.replay)).toBe(0);
    expect(edited.summary.result).toEqual({ rounds: 3, draft: "Loops repeat." });
    expect(edited.summary.tasks.map((row) => row.name)).toEqual(["write", "review", "write#2", "review#2", "write#3", "review#3"]);
  });

  it("a replay's dollar budget counts what the recorded calls cost, not the scripted model's figures", { timeout: RUN_MS }, async () => {
    // The same record, as if the run had a $1 budget and its first call had cost $5: the second agent() call throws.
    const dear = join(tmp, "dear");
    await cp(recorded, dear, { recursive: true });
    const summary = JSON.parse(await readFile(join(dear, "summary.json"), "utf8")) as WorkflowSummary;
    summary.budget_usd = 1;
    summary.tasks[0]!.cost_usd = 5;
    await writeFile(join(dear, "summary.json"), JSON.stringify(summary));
    const replay = await replayWorkflow(dear, { outDir: join(tmp, "replay-dear"), cwd: checkout });
    expect(replay.exitCode).toBe(1);
    expect(replay.summary.budget_usd).toBe(1);
    expect(replay.summary.error?.message).toMatch(/budget/);
    expect(replay.summary.tasks.map((row) => [row.name, row.status])).toEqual([["write", "succeeded"]]);
    expect(replay.summary.replay?.divergences).toEqual([]);
  });
});
