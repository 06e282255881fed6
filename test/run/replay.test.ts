// Replay on the real claude CLI: a run recorded against the scripted model, played again from its replies.jsonl alone
// (the config's rehearsal scripts removed), divergences when a tool's output changed, overrides, and runs that cannot replay.
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { replaySwarmFile, runSwarmFile, type SwarmRunResult } from "../../src/index.ts";
import { cadre, repo } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

/** A copy of a swarm file in `dir`, without its rehearsal scripts: whatever the replay's model says comes from the record. */
async function checkout(dir: string, source: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const text = await readFile(source, "utf8");
  const file = join(dir, name);
  await writeFile(file, text.slice(0, text.indexOf("\nrehearsal:")));
  return file;
}

const LOOP = join(repo, "examples", "write-review-loop.yaml");

/** Each run of the loop starts five claude processes, one after another; a busy machine makes that slow. */
const LOOP_RUN_MS = 180_000;

describe("replay of write-review-loop", () => {
  let tmp: string;
  let recorded: string;
  let copy: string;
  let original: SwarmRunResult;
  beforeAll(async () => {
    tmp = await realpath(await mkdtemp(join(tmpdir(), "cadre-replay-")));
    recorded = join(tmp, "recorded");
    original = await runSwarmFile(LOOP, { outDir: recorded, rehearse: true });
    copy = await checkout(join(tmp, "checkout"), LOOP, "write-review-loop.yaml");
  }, LOOP_RUN_MS);
  afterAll(() => rm(tmp, { recursive: true, force: true }));

  it("gives the same statuses, texts and rounds from the recorded replies alone, at no cost", { timeout: LOOP_RUN_MS }, async () => {
    expect(original.exitCode).toBe(0);
    expect(await readFile(join(recorded, "replies.jsonl"), "utf8")).toContain('"name":"review#2"');
    const replay = await replaySwarmFile(recorded, { config: copy, outDir: join(tmp, "replay") });
    expect(replay.exitCode, replay.warnings.join("\n")).toBe(0);
    const rows = (summary: typeof replay.summary) => summary.tasks.map((task) => [task.name, task.status, task.text, task.structured_output]);
    expect(rows(replay.summary)).toEqual(rows(original.summary));
    expect(replay.summary.loops).toEqual(original.summary.loops);
    expect(replay.summary.loops?.[0]).toMatchObject({ rounds: 2, status: "succeeded" });
    expect(replay.summary.replay).toEqual({ of: { run_id: original.summary.run_id, dir: recorded }, divergences: [] });
    // Offline, at no cost: the scripted model's simulated tokens, no money.
    expect(replay.summary.cost_simulated).toBe(true);
  });

  it("an override makes the reviewer reject once more: the loop goes round a third time", { timeout: LOOP_RUN_MS }, async () => {
    // Round 3 gets the replies of the path the recorded run did not take.
    const overrides = join(tmp, "overrides.yaml");
    await writeFile(
      overrides,
      [
        "review#2:",
        "  0: { tool_use: { name: StructuredOutput, input: { approved: false, notes: 'Name the until: condition.' } } }",
        "write#3:",
        "  2: { text: 'cadre runs tasks in rounds until an until: condition holds.' }",
        "review#3:",
        "  0: { tool_use: { name: StructuredOutput, input: { approved: true, notes: 'Good.' } } }",
        "publish:",
        "  0: { text: '## Loops: rounds until a condition holds.' }",
      ].join("\n"),
    );
    const edited = await replaySwarmFile(recorded, { config: copy, overrides, outDir: join(tmp, "edited") });
    expect(edited.exitCode, JSON.stringify(edited.summary.replay)).toBe(0);
    expect(edited.summary.loops?.[0]).toMatchObject({ rounds: 3, status: "succeeded" });
    const byName = new Map(edited.summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("review#2")?.structured_output).toEqual({ approved: false, notes: "Name the until: condition." });
    // The writer's third round continued its session, where the record has two replies before it.
    expect(byName.get("write#3")?.text).toBe("cadre runs tasks in rounds until an until: condition holds.");
    expect(byName.get("publish")?.text).toBe("## Loops: rounds until a condition holds.");
  });

  it("an override alone leaves round 3 without replies: the replay names the turn the record lacks", { timeout: LOOP_RUN_MS }, async () => {
    const overrides = join(tmp, "only-review.yaml");
    await writeFile(overrides, "review#2:\n  0: { tool_use: { name: StructuredOutput, input: { approved: false, notes: 'Again.' } } }\n");
    const short = await replaySwarmFile(recorded, { config: copy, overrides, outDir: join(tmp, "short") });
    expect(short.exitCode).toBe(1);
    expect(short.summary.replay?.divergences).toEqual([
      // The record has no round 3 of the writer: a path the recorded run did not take.
      expect.objectContaining({ script: "write#3", step: 2, kind: "no_record", got: expect.stringContaining("Again.") }),
    ]);
    expect(short.summary.tasks.find((task) => task.name === "write#3")).toMatchObject({
      status: "failed",
      error: expect.objectContaining({ message: expect.stringContaining("replay diverged: write#3, turn 2") }),
    });
  });
});

const READER = [
  "name: reader",
  "defaults:",
  "  cwd: .",
  '  allowed_tools: ["Bash(cat:*)"]',
  "tasks:",
  "  - name: read",
  "    prompt: Read data.txt and say what it holds.",
  "  - name: after",
  "    depends_on: [read]",
  "    prompt: 'Summarise: {{results.read}}'",
  "rehearsal:",
  "  read:",
  // Thinking and a tool call in one reply: the CLI streams them as two assistant messages, which the record joins again.
  "    - content:",
  "        - { type: thinking, thinking: 'The file is small: cat it.', signature: c2lnbmF0dXJl }",
  "        - { type: tool_use, id: toolu_read_1, name: Bash, input: { command: cat data.txt, description: Read the data } }",
  "    - text: 'It holds: {{tool_result}}'",
  "  after:",
  "    - text: done",
].join("\n");

describe("divergence", () => {
  it("a tool whose output changed in the test checkout stops its session at that turn, with what was expected and what came", {
    timeout: LOOP_RUN_MS,
  }, async ({ tmp }) => {
    const recordedTree = join(tmp, "original");
    await mkdir(recordedTree);
    await writeFile(join(recordedTree, "reader.yaml"), `${READER}\n`);
    await writeFile(join(recordedTree, "data.txt"), "alpha 1\n");
    const recorded = join(tmp, "recorded");
    const original = await runSwarmFile(join(recordedTree, "reader.yaml"), { outDir: recorded, rehearse: true });
    expect(original.exitCode).toBe(0);
    expect(original.summary.tasks[0]?.text).toBe("It holds: alpha 1");

    // The same tool output in a checkout: the replay follows the record.
    const same = join(tmp, "same");
    await cp(recordedTree, same, { recursive: true });
    const copy = await checkout(same, join(recordedTree, "reader.yaml"), "reader.yaml");
    const faithful = await replaySwarmFile(recorded, { config: copy, outDir: join(tmp, "replay-same") });
    expect(faithful.exitCode, JSON.stringify(faithful.summary.replay)).toBe(0);
    expect(faithful.summary.tasks.map((task) => task.text)).toEqual(original.summary.tasks.map((task) => task.text));
    const transcript = await readFile(join(tmp, "replay-same", faithful.summary.tasks[0]!.transcript!), "utf8");
    expect(transcript).toContain('"thinking":"The file is small: cat it."');

    // Another output: task read, turn 1 (the reply after the tool ran) diverges; what depends on it does not run.
    await writeFile(join(same, "data.txt"), "beta 2\n");
    const run = await cadre(["replay", recorded, "--config", copy, "--out", join(tmp, "replay-changed")]);
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /replay diverged: read, turn 1: a tool result differs from the recorded one; expected "toolu_read_1: alpha 1", got "toolu_read_1: beta 2"/,
    );
    const summary = JSON.parse(await readFile(join(tmp, "replay-changed", "summary.json"), "utf8"));
    expect(summary.replay.divergences).toEqual([
      expect.objectContaining({
        script: "read",
        step: 1,
        kind: "tool_result",
        expected: expect.stringContaining("alpha 1"),
        got: expect.stringContaining("beta 2"),
      }),
    ]);
    expect(summary.tasks.map((task: { name: string; status: string }) => [task.name, task.status])).toEqual([
      ["read", "failed"],
      ["after", "skipped"],
    ]);
  });
});

const SPAWNER = [
  "name: spawner",
  // A lone agent has no peer to reach, so its workers get the peer tools (spawn_worker among them) only when asked.
  "peer_tools: true",
  "agents:",
  "  lead:",
  "    description: Splits the counting between two workers.",
  "    prompt: You split work.",
  "tasks:",
  "  - name: lead",
  "    agent: lead",
  "    prompt: Count the red and the blue widgets.",
  "rehearsal:",
  "  lead:",
  "    - tool_uses:",
  '        - { name: mcp__cadre__spawn_worker, input: { prompt: "count the red widgets" } }',
  '        - { name: mcp__cadre__spawn_worker, input: { prompt: "count the blue widgets" } }',
  '    - text: "Both counted: {{tool_result}}"',
  "  lead/child:",
  '    - text: "counted for: {{prompt}}"',
].join("\n");

describe("several conversations under one name", () => {
  it("two children spawned at once (both lead/child) each replay their own recorded conversation", { timeout: LOOP_RUN_MS }, async ({ tmp }) => {
    const recordedTree = join(tmp, "original");
    await mkdir(recordedTree);
    await writeFile(join(recordedTree, "spawner.yaml"), `${SPAWNER}\n`);
    const recorded = join(tmp, "recorded");
    const original = await runSwarmFile(join(recordedTree, "spawner.yaml"), { outDir: recorded, rehearse: true });
    expect(original.exitCode).toBe(0);

    const copy = await checkout(join(tmp, "checkout"), join(recordedTree, "spawner.yaml"), "spawner.yaml");
    const replay = await replaySwarmFile(recorded, { config: copy, outDir: join(tmp, "replay") });
    // spawn_worker's answer carries the child's task id and cost, which differ every run: the digest leaves them out.
    expect(replay.exitCode, JSON.stringify(replay.summary.replay)).toBe(0);
    expect(replay.summary.tasks[0]?.text).toBe(original.summary.tasks[0]?.text);
    // Each child's session ended with its own answer, read from its transcript.
    const answers = await Promise.all(
      replay.summary.sessions.map(async (session) => {
        const lines = (await readFile(join(tmp, "replay", session.transcript!), "utf8")).trim().split("\n");
        return [session.name, session.status, JSON.parse(lines.at(-1)!).result];
      }),
    );
    expect(answers.sort()).toEqual([
      ["lead/child", "succeeded", "counted for: count the blue widgets"],
      ["lead/child", "succeeded", "counted for: count the red widgets"],
    ]);
  });
});

describe("posted tasks", () => {
  it("a lead's posts are played again: the same tasks, rows and replies", { timeout: LOOP_RUN_MS }, async ({ tmp }) => {
    const example = join(repo, "examples", "posted-tasks.yaml");
    const recorded = join(tmp, "recorded");
    const original = await runSwarmFile(example, { outDir: recorded, rehearse: true });
    expect(original.exitCode).toBe(0);
    const copy = await checkout(join(tmp, "checkout"), example, "posted-tasks.yaml");
    const replay = await replaySwarmFile(recorded, { config: copy, outDir: join(tmp, "replay") });
    expect(replay.exitCode, JSON.stringify(replay.summary.replay)).toBe(0);
    const rows = (result: typeof original) => result.summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null, t.text]);
    expect(rows(replay)).toEqual(rows(original));
    expect(rows(replay).map((row) => row[0])).toEqual(["lead", "fix-cache", "fix-retry", "fix-slug"]);
  });
});

describe("runs that cannot be replayed", () => {
  it("a run directory that does not exist: one line naming the command and the path, exit 2", async ({ tmp }) => {
    const missing = await cadre(["replay", join(tmp, "nope-run")]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toBe(`cadre replay: no run directory at ${join(tmp, "nope-run")}`);
  });

  it("a run without replies.jsonl says so; the recorded run's own working tree is refused without --in-place", async ({ tmp }) => {
    await writeFile(join(tmp, "summary.json"), "{}");
    const older = await cadre(["replay", tmp]);
    expect(older.exitCode).toBe(2);
    expect(older.stderr).toContain("has no replies.jsonl: the run was recorded by a cadre older than replay");

    const recorded = join(tmp, "recorded");
    await mkdir(recorded);
    await writeFile(join(recorded, "replies.jsonl"), '{"replies":1,"run_id":"r1"}\n');
    await writeFile(join(recorded, "summary.json"), JSON.stringify(summaryNaming(LOOP)));
    const inTree = await cadre(["replay", recorded]);
    expect(inTree.exitCode).toBe(2);
    expect(inTree.stderr).toContain("a replay runs the tools again, for real");
    expect(inTree.stderr).toContain("--in-place");
  });
});

/** The least of a summary.json that names its swarm file. */
function summaryNaming(config: string) {
  return {
    swarm: "s",
    run_id: "r1",
    config,
    rehearsal: true,
    cost_simulated: true,
    started_at: "",
    finished_at: "",
    duration_ms: 0,
    interrupted: false,
    exit_code: 0,
    totals: {
      tasks: 0,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
      skipped: 0,
      cost_usd: 0,
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      cache_saved_usd: 0,
      num_turns: 0,
    },
    tasks: [],
    sessions: [],
  };
}
