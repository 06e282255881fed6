// withJournal: a summary brought up to date by the journal lines written after it (no processes).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournalLine } from "../../src/run/record/journal.ts";
import { JOURNAL_FILE, readJournal, withJournal } from "../../src/run/record/journal.ts";
import type { Summary, SummaryTask } from "../../src/run/record/schema.ts";

const usage = (input: number) => ({ input_tokens: input, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
const fingerprint = { prompt: "p", settings: "s" };

function row(name: string, status: SummaryTask["status"], cost = 0, extra: Partial<SummaryTask> = {}): SummaryTask {
  return {
    name,
    agent: null,
    status,
    text: status === "succeeded" ? `done ${name}` : "",
    structured_output: null,
    cost_usd: cost,
    usage: usage(cost > 0 ? 100 : 0),
    num_turns: cost > 0 ? 1 : 0,
    queued_ms: 0,
    started_at: null,
    finished_at: null,
    duration_ms: 0,
    attempts: cost > 0 ? 1 : 0,
    session_id: null,
    depends_on: [],
    transcript: null,
    error: null,
    fingerprint: status === "pending" ? null : fingerprint,
    ...extra,
  };
}

const AT = Date.parse("2026-01-01T00:00:10.000Z");

function summary(tasks: SummaryTask[]): Summary {
  return {
    swarm: "s",
    run_id: "r",
    config: "s.yaml",
    rehearsal: false,
    cost_simulated: false,
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: new Date(AT).toISOString(),
    duration_ms: 10_000,
    interrupted: false,
    complete: false,
    attempt: 2,
    // As buildSummary counts them: the tasks this attempt started.
    attempt_totals: { tasks_run: tasks.filter((t) => t.fingerprint != null && !t.carried_over).length, cost_usd: 0.5 },
    exit_code: 0,
    budget_usd: null,
    totals: {
      tasks: tasks.length,
      succeeded: 1,
      failed: 0,
      cancelled: 0,
      skipped: 0,
      cost_usd: 2,
      usage: usage(300),
      cache_saved_usd: 0,
      num_turns: 3,
    },
    tasks,
    sessions: [],
  };
}

const line = (at: number, task: SummaryTask, attempt = 2): JournalLine => ({ at, attempt, task });

describe("withJournal", () => {
  it("gives each task the summary shows unended its newest line written after the summary, and adds what those spent", () => {
    const record = summary([row("a", "succeeded", 0.5), row("b", "running", 0, { session_id: "s-b" }), row("c", "pending"), row("d", "pending")]);
    const merged = withJournal(record, [
      // Older than the summary: already in it.
      line(AT - 5, row("c", "failed", 9)),
      line(AT + 1, row("b", "succeeded", 0.25)),
      line(AT + 2, row("c", "running", 0, { session_id: "s-c" })),
      line(AT + 3, row("c", "succeeded", 0.125)),
      // A task the summary shows ended keeps its row.
      line(AT + 4, row("a", "failed", 7)),
    ]);
    expect(merged.tasks.map((t) => [t.name, t.status, t.cost_usd])).toEqual([
      ["a", "succeeded", 0.5],
      ["b", "succeeded", 0.25],
      ["c", "succeeded", 0.125],
      ["d", "pending", 0],
    ]);
    expect(merged.totals).toMatchObject({ succeeded: 3, failed: 0, cost_usd: 2.375, num_turns: 5 });
    expect(merged.totals.usage.input_tokens).toBe(500);
    expect(merged.attempt_totals).toEqual({ tasks_run: 3, cost_usd: 0.875 });
    expect(merged.complete).toBe(false);
    // The summary read is not changed.
    expect(record.tasks[1]!.status).toBe("running");
  });

  it("counts a carried-over result as spent before, and says complete once no task is left unended", () => {
    const record = summary([row("a", "succeeded", 0.5), row("b", "pending")]);
    const merged = withJournal(record, [line(AT + 1, row("b", "succeeded", 3, { carried_over: true }))]);
    expect(merged.tasks[1]!.carried_over).toBe(true);
    expect(merged.totals).toMatchObject({ succeeded: 2, cost_usd: 2 });
    expect(merged.attempt_totals).toEqual({ tasks_run: 1, cost_usd: 0.5 });
    expect(merged.complete).toBe(true);
    expect(withJournal(record, [])).toBe(record);
  });
});

describe("a corrupt line of journal.jsonl", () => {
  it("is named by its number, and the lines after it are still read", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cadre-journal-"));
    try {
      const text = [line(AT, row("a", "succeeded", 1)), "\u0000\u0000garbage", line(AT, row("b", "succeeded", 1)), { at: 1, task: "no row" }]
        .map((value) => (typeof value === "string" ? value : JSON.stringify(value)))
        .join("\n");
      await writeFile(join(dir, JOURNAL_FILE), `${text}\n{"at":1,"attempt`);
      const read = await readJournal(dir);
      expect(read.values.map((value) => value.task.name)).toEqual(["a", "b"]);
      expect(read.unreadable).toEqual([
        expect.stringMatching(/^journal\.jsonl line 2 cannot be read: not JSON \(/),
        expect.stringMatching(/^journal\.jsonl line 4 cannot be read: not a line of this file \(/),
        expect.stringMatching(/^journal\.jsonl line 5 cannot be read \(cut short: the run was killed as it was written\): not JSON/),
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
