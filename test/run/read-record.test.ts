// readRecord, the one reader of a run's record: strict for --resume, lenient for the dashboard, with the journal's newer lines (no processes).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildSummary, readRecord } from "../../src/run/index.ts";
import { JOURNAL_FILE, type JournalLine } from "../../src/run/record/journal.ts";
import { resolvedConfig, result, T0 } from "../support/swarm.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-read-record-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

/** A record of two tasks, written while "b" was still pending. */
function pendingRecord() {
  const config = resolvedConfig("s", ["a", "b"]);
  return buildSummary({
    config,
    results: new Map([["a", result("a", "succeeded")]]),
    totals: { costUsd: 0, usage },
    sessions: [],
    transcripts: new Map(),
    worktrees: new Map(),
    runId: "r",
    outDir: dir,
    rehearsal: false,
    budgetUsd: undefined,
    startedAt: T0,
    finishedAt: T0 + 1_000,
    stop: undefined,
  });
}

describe("readRecord", () => {
  it("says why a record cannot be read: none, not JSON, not a record", async () => {
    expect(await readRecord(dir)).toEqual({ problem: "missing" });
    await writeFile(join(dir, "summary.json"), "{ not json");
    expect(await readRecord(dir, { lenient: true })).toMatchObject({ problem: "not_json" });
    await writeFile(join(dir, "summary.json"), JSON.stringify({ swarm: "old", tasks: [{ name: "a", status: "succeeded" }] }));
    expect(await readRecord(dir)).toMatchObject({ problem: "not_a_record" });
    // What the strict reader refuses, the lenient one opens: a record of an older cadre.
    expect(await readRecord(dir, { lenient: true })).toEqual({
      record: { swarm: "old", tasks: [{ name: "a", status: "succeeded" }] },
      unreadable: [],
    });
  });

  it("reads the journal's newer lines over the summary, unless told not to", async () => {
    const summary = pendingRecord();
    expect(summary.tasks.map((t) => t.status)).toEqual(["succeeded", "pending"]);
    await writeFile(join(dir, "summary.json"), JSON.stringify(summary));
    const line: JournalLine = { at: T0 + 2_000, attempt: 1, task: { ...summary.tasks[1]!, status: "failed" } };
    await writeFile(join(dir, JOURNAL_FILE), `${JSON.stringify(line)}\n{"cut short`);
    const strict = await readRecord(dir);
    const lenient = await readRecord(dir, { lenient: true });
    const summaryOnly = await readRecord(dir, { journal: false });
    for (const read of [strict, lenient]) expect("record" in read && read.record.tasks.map((t) => t.status)).toEqual(["succeeded", "failed"]);
    expect("record" in summaryOnly && summaryOnly.record.tasks.map((t) => t.status)).toEqual(["succeeded", "pending"]);
  });
});
