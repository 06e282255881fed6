// Time limits on the real command line: timeout_s and duration_ms count from a task's start,
// never the time it waited for a slot; summary.json says how long each task queued and ran.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SummaryTask } from "../../src/run/record/schema.ts";
import { cadre, readSummary } from "../support/cli.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-time-limits-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(name: string, lines: string[]) {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `${lines.join("\n")}\n`);
  const out = join(dir, `${name}-out`);
  const result = await cadre(["run", file, "--rehearse", "--out", out]);
  return { result, summary: await readSummary(out) };
}

const startOf = (task: SummaryTask) => Date.parse(task.started_at as string);
const endOf = (task: SummaryTask) => Date.parse(task.finished_at as string);

describe("time limits", () => {
  it("tasks queued longer than their timeout_s still get their whole limit to run", async () => {
    // Each task runs about 4 s, far within its 12 s; the last one waits for five of them.
    const names = ["t1", "t2", "t3", "t4", "t5", "t6"];
    const { result, summary } = await run("queued", [
      "concurrency: 1",
      "defaults: { timeout_s: 12 }",
      "tasks:",
      ...names.map((name) => `  - { name: ${name}, prompt: work }`),
      "rehearsal:",
      ...names.map((name) => `  ${name}: [{ text: done ${name}, delay_ms: 3000 }]`),
    ]);
    const byStart = [...summary.tasks].sort((a, b) => startOf(a) - startOf(b));
    const last = byStart.at(-1)!;
    // The scenario holds: the last task waited longer than the limit before it could start.
    expect(last.queued_ms).toBeGreaterThan(12_000);
    expect(summary.tasks.map((t) => [t.name, t.status, t.error?.message])).toEqual(names.map((name) => [name, "succeeded", undefined]));
    expect(result.exitCode, result.stderr).toBe(0);
    // Six tasks of 4 s one after another: on a busy machine the run alone takes 40 s.
  }, 150_000);

  it("summary.json gives each task queued_ms, started_at, finished_at and duration_ms = its run time", async () => {
    const { summary } = await run("timing", [
      "concurrency: 1",
      "tasks:",
      "  - { name: first, prompt: work }",
      "  - { name: second, prompt: work }",
      "rehearsal:",
      "  first: [{ text: done, delay_ms: 1500 }]",
      "  second: [{ text: done, delay_ms: 1500 }]",
    ]);
    const [a, b] = [...summary.tasks].sort((x, y) => startOf(x) - startOf(y)) as [SummaryTask, SummaryTask];
    for (const task of [a, b]) {
      expect(task.duration_ms).toBe(endOf(task) - startOf(task));
      expect(task.duration_ms).toBeGreaterThanOrEqual(1500);
    }
    // One slot: the second started once the first had its scripted reply, and that wait is counted as queued, not as run time.
    expect(startOf(b) - startOf(a)).toBeGreaterThanOrEqual(1500);
    expect(b.queued_ms).toBeGreaterThanOrEqual(1500);
    expect(b.queued_ms).toBeGreaterThan(a.queued_ms);
  });

  it("a task that runs past its timeout_s fails with TASK_TIMEOUT, counted from its start", async () => {
    const { result, summary } = await run("overrun", [
      "concurrency: 1",
      "tasks:",
      "  - { name: hog, prompt: work, priority: 1 }",
      "  - { name: slow, prompt: work, timeout_s: 4 }",
      "rehearsal:",
      "  hog: [{ text: done, delay_ms: 5000 }]",
      "  slow: [{ text: never, delay_ms: 30000 }]",
    ]);
    const slow = summary.tasks.find((t) => t.name === "slow")!;
    expect(result.exitCode).toBe(1);
    expect([slow.status, slow.error?.code]).toEqual(["failed", "TASK_TIMEOUT"]);
    // It queued behind the hog for longer than its limit, then ran for its whole limit.
    expect(slow.queued_ms).toBeGreaterThan(4_000);
    expect(slow.duration_ms).toBeGreaterThanOrEqual(4_000);
    expect(slow.duration_ms).toBeLessThan(30_000);
  });
});
