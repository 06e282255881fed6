// The replays kept with the examples (examples/replays/): a recorded run of write-review-loop and one of the workflow
// script review.js, played again on the real claude CLI from their replies.jsonl and asserted on, as a project keeps
// a replay as a test.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaySwarmFile, replayWorkflow } from "../src/index.ts";
import { repo } from "./support/cli.ts";

const FIXTURE = join(repo, "examples", "replays", "write-review-loop");
const CONFIG = join(repo, "examples", "write-review-loop.yaml");
/** A replay of the loop starts five claude processes, one after another. */
const REPLAY_MS = 180_000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-example-replay-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("examples/replays/write-review-loop", () => {
  it("replays: the reviewer rejects the first draft and approves the second, in two rounds", { timeout: REPLAY_MS }, async () => {
    // The fixture is only replies.jsonl: no summary names a working tree, so the replay runs where the config is.
    const { summary, exitCode } = await replaySwarmFile(FIXTURE, { config: CONFIG, outDir: join(dir, "replay") });
    expect(exitCode).toBe(0);
    expect(summary.replay?.divergences).toEqual([]);
    expect(summary.tasks.map((task) => [task.name, task.status])).toEqual([
      ["write", "succeeded"],
      ["write#1", "succeeded"],
      ["write#2", "succeeded"],
      ["review", "succeeded"],
      ["review#1", "succeeded"],
      ["review#2", "succeeded"],
      ["publish", "succeeded"],
    ]);
    const task = (name: string) => summary.tasks.find((row) => row.name === name);
    expect(task("review#1")?.structured_output).toEqual({ approved: false, notes: "Say what a loop does, not that it is great." });
    expect(task("write")?.text).toBe("cadre runs tasks in rounds until a condition holds, with every round in summary.json.");
    expect(summary.loops).toEqual([expect.objectContaining({ name: "draft", rounds: 2, status: "succeeded" })]);
  });

  it("with reject-once-more.yaml the loop takes the path the record did not: three rounds", { timeout: REPLAY_MS }, async () => {
    const overrides = join(FIXTURE, "reject-once-more.yaml");
    const { summary, exitCode } = await replaySwarmFile(FIXTURE, { config: CONFIG, overrides, outDir: join(dir, "edited") });
    expect(exitCode, JSON.stringify(summary.replay)).toBe(0);
    expect(summary.loops).toEqual([expect.objectContaining({ name: "draft", rounds: 3, status: "succeeded" })]);
    expect(summary.tasks.find((row) => row.name === "publish")?.text).toContain("or max_rounds is reached.");
  });
});

const REVIEW_FIXTURE = join(repo, "examples", "replays", "review");
const REVIEW_SCRIPT = join(repo, "examples", "workflows", "review.js");
/** The recorded run reviewed one dimension: one reviewer, then a verifier per finding. */
const REVIEW_ARGS = { dimensions: ["bugs"] };

describe("examples/replays/review (a workflow script)", () => {
  it("replays: the reviewer's two findings are each verified, in a pipeline, and both confirmed", { timeout: REPLAY_MS }, async () => {
    // Only replies.jsonl: the script and its args are given, as a swarm fixture's config is.
    const { summary, exitCode } = await replayWorkflow(REVIEW_FIXTURE, { script: REVIEW_SCRIPT, args: REVIEW_ARGS, outDir: join(dir, "review") });
    expect(exitCode, JSON.stringify(summary.replay)).toBe(0);
    expect(summary.replay?.divergences).toEqual([]);
    expect(summary.tasks.map((row) => [row.name, row.phase, row.status])).toEqual([
      ["review:bugs", "Review", "succeeded"],
      ["verify:bugs", "Verify", "succeeded"],
      ["verify:bugs#2", "Verify", "succeeded"],
    ]);
    expect(summary.logs).toEqual(["2 of 2 findings confirmed"]);
    expect((summary.result as { confirmed: { title: string }[] }).confirmed.map((finding) => finding.title)).toEqual([
      "unchecked input reaches the query",
      "entries never expire",
    ]);
  });

  it("with refute-one.yaml the second verifier refutes its finding: the script confirms one of two", { timeout: REPLAY_MS }, async () => {
    const overrides = join(REVIEW_FIXTURE, "refute-one.yaml");
    const { summary, exitCode } = await replayWorkflow(REVIEW_FIXTURE, {
      script: REVIEW_SCRIPT,
      args: REVIEW_ARGS,
      overrides,
      outDir: join(dir, "review-edited"),
    });
    expect(exitCode, JSON.stringify(summary.replay)).toBe(0);
    expect(summary.logs).toEqual(["1 of 2 findings confirmed"]);
    expect(summary.tasks.find((row) => row.name === "verify:bugs#2")?.result).toEqual({ real: false, why: "entries expire with the cache's TTL" });
  });
});
