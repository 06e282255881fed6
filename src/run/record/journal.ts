/**
 * The run's journal, `journal.jsonl` beside summary.json: one line per task
 * end and per task whose session became known, appended and never rewritten,
 * so that a task's end costs the same at any size of run. summary.json is
 * compacted from it now and then; a reader of a run that is going on, or was
 * killed, reads the journal's newer lines over the summary (`withJournal`).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { cacheSavingUsd } from "../../orchestrator/index.ts";
import { type ReadLines, readJsonLines } from "./json-lines.ts";
import { type Summary, SummaryTaskSchema } from "./schema.ts";

export const JOURNAL_FILE = "journal.jsonl";

/**
 * A task's row as summary.json would have it, written at `at` (ms since the
 * epoch; after every compaction before it, so that a summary whose
 * finished_at is earlier lacks it) by attempt `attempt`.
 */
export const JournalLineSchema = z.looseObject({ at: z.number(), attempt: z.number(), task: SummaryTaskSchema });
export type JournalLine = z.infer<typeof JournalLineSchema>;

/** The journal of a run directory (none when it has none: older cadre), and each line that cannot be read (a line cut short by a kill, a corrupt one), named. */
export async function readJournal(dir: string): Promise<ReadLines<JournalLine>> {
  const text = await readFile(join(dir, JOURNAL_FILE), "utf8").catch(() => "");
  return readJsonLines(text, JOURNAL_FILE, (value) => JournalLineSchema.parse(value));
}

const UNENDED = new Set(["running", "pending"]);

/** What withJournal reads and updates: summary.json's own shape, or the dashboard's lenient reading of it. */
interface JournalTarget {
  finished_at?: string;
  complete?: boolean;
  tasks: { name: string; status: string }[];
  totals?: Partial<Summary["totals"]>;
  attempt_totals?: Summary["attempt_totals"];
}

/**
 * The record as the journal brings it up to date: each task that the
 * summary shows running or pending and that has a newer line takes that
 * line's row (the last one), a task made after it (a copy, a round) gains
 * its row, and the totals add what those rows spent.
 * Sessions (peers, supervisors, children) are as the summary last had them.
 */
export function withJournal<R extends JournalTarget>(record: R, lines: readonly JournalLine[]): R {
  const since = record.finished_at ? Date.parse(record.finished_at) : Number.NEGATIVE_INFINITY;
  const newer = new Map<string, JournalLine["task"]>();
  for (const line of lines) if (line.at > since) newer.set(line.task.name, line.task);
  if (newer.size === 0) return record;
  const totals = record.totals && { ...record.totals, ...(record.totals.usage && { usage: { ...record.totals.usage } }) };
  const attemptTotals = record.attempt_totals && { ...record.attempt_totals };
  const tasks = record.tasks.map((row) => {
    const now = newer.get(row.name);
    if (now === undefined || !UNENDED.has(row.status)) return row;
    const ranNow = (task: { fingerprint?: unknown; carried_over?: boolean }) => task.fingerprint != null && !task.carried_over;
    if (attemptTotals) attemptTotals.tasks_run += Number(ranNow(now)) - Number(ranNow(row as Partial<JournalLine["task"]>));
    if (!now.carried_over) {
      if (attemptTotals) attemptTotals.cost_usd += now.cost_usd;
      if (totals) addSpent(totals, now);
    }
    return now as unknown as R["tasks"][number];
  });
  // Tasks the run made after the summary was written (a map's copies, a loop's rounds) have no row in it yet.
  const known = new Set(record.tasks.map((row) => row.name));
  for (const [name, now] of newer) {
    if (known.has(name)) continue;
    if (attemptTotals && now.fingerprint != null && !now.carried_over) attemptTotals.tasks_run += 1;
    if (!now.carried_over) {
      if (attemptTotals) attemptTotals.cost_usd += now.cost_usd;
      if (totals) addSpent(totals, now);
    }
    tasks.push(now as unknown as R["tasks"][number]);
  }
  if (totals) {
    totals.tasks = tasks.length;
    for (const status of ["succeeded", "failed", "cancelled", "skipped"] as const) totals[status] = tasks.filter((t) => t.status === status).length;
  }
  return {
    ...record,
    tasks,
    ...(record.complete !== undefined && { complete: tasks.every((task) => !UNENDED.has(task.status)) }),
    ...(totals && { totals }),
    ...(attemptTotals && { attempt_totals: attemptTotals }),
  };
}

/** Adds a task's spending to the record's totals, as buildSummary counts it. */
function addSpent(totals: Partial<Summary["totals"]>, task: JournalLine["task"]): void {
  totals.cost_usd = (totals.cost_usd ?? 0) + task.cost_usd;
  totals.num_turns = (totals.num_turns ?? 0) + task.num_turns;
  totals.cache_saved_usd = (totals.cache_saved_usd ?? 0) + cacheSavingUsd(task.usage, task.cost_usd);
  const usage = totals.usage;
  if (usage === undefined) return;
  for (const key of Object.keys(task.usage) as (keyof typeof usage)[]) {
    if (typeof usage[key] === "number" && typeof task.usage[key] === "number") usage[key] += task.usage[key];
  }
}
