// RunRecorder, the run's record as it goes, without an engine or a process: a running task's session is journalled at
// once, an ended task's row too, the record is written whole (the text of buildSummary) and says once that it cannot be.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RecordEvent } from "../../src/run/index.ts";
import { readJournal } from "../../src/run/record/journal.ts";
import { type RecorderOptions, RunRecorder } from "../../src/run/record/recorder.ts";
import { unrunResult } from "../../src/swarm/index.ts";
import { resolvedConfig, result, T0 } from "../support/swarm.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-recorder-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

function recorder(trouble: RecordEvent[] = []): RunRecorder {
  const options: RecorderOptions = {
    plan: resolvedConfig("s", ["a", "b"]),
    outDir: dir,
    runId: "r",
    startedAt: T0,
    rehearsal: true,
    budgetUsd: undefined,
    attempt: 1,
    source: { totals: { costUsd: 0, usage }, sessionRecords: [], transcriptPaths: new Map() },
    onTrouble: (event) => trouble.push(event),
  };
  return new RunRecorder(options);
}

describe("RunRecorder", () => {
  it("journals a running task's session as soon as it is known, and each task as it ends; leaves no half-written summary", async () => {
    await writeFile(join(dir, "summary.json.123.tmp"), "{ half");
    const record = recorder();
    record.taskStarted("a", T0 + 10);
    record.sessionKnown("a", "s-a");
    // The same session again is no news.
    record.sessionKnown("a", "s-a");
    record.taskSettled({ task: { name: "b", agent: undefined }, result: result("b", "failed") });
    record.finish(T0 + 100);
    const lines = (await readJournal(dir)).values;
    expect(lines.map((line) => [line.task.name, line.task.status, line.task.session_id])).toEqual([
      ["a", "running", "s-a"],
      ["b", "failed", "s"],
    ]);
    expect(record.ended("b")).toBe(true);
    expect(record.ended("a")).toBe(false);
    expect((await readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("writes the record whole, as buildSummary has it; a task killed while running keeps its session", async () => {
    const record = recorder();
    record.taskStarted("a", T0 + 10);
    record.sessionKnown("a", "s-a");
    record.finish();
    record.settleUnended((task) => unrunResult(task, "cancelled", { code: "INTERRUPTED", message: "killed" }));
    const { summary, path, error } = record.writeRecord({ reason: "SIGTERM", exitCode: 143 });
    expect(error).toBeUndefined();
    expect(await readFile(path, "utf8")).toBe(`${JSON.stringify(summary, null, 2)}\n`);
    expect(summary.tasks.map((t) => [t.name, t.status, t.session_id])).toEqual([
      ["a", "cancelled", "s-a"],
      ["b", "cancelled", null],
    ]);
    expect([summary.exit_code, summary.interrupted, summary.complete]).toEqual([143, true, true]);
  });

  it("says once that the record cannot be written, and once that it can again", async () => {
    const trouble: RecordEvent[] = [];
    const record = recorder(trouble);
    // A directory where summary.json goes (it cannot be renamed over): a write fails as on a full disk, whoever runs it.
    await mkdir(join(dir, "summary.json", "in-the-way"), { recursive: true });
    record.rewrite();
    record.rewrite();
    await rm(join(dir, "summary.json"), { recursive: true });
    record.rewrite();
    record.finish();
    expect(trouble.map((event) => event.type)).toEqual(["record_unwritten", "record_written_again"]);
  });
});
