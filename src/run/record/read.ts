// The one reader of a run's record: summary.json with its journal's newer lines, strict for --resume, lenient for the dashboard.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { readJournal, withJournal } from "./journal.ts";
import { SUMMARY_FILE, type Summary, SummarySchema, SummarySessionSchema, SummaryTaskSchema } from "./schema.ts";

/**
 * A run's summary.json as the dashboard reads it: the record's own schemas
 * with every field optional but a task's name and status (a status a newer
 * cadre adds still shows), so that records written by older or newer cadre
 * versions still open. Timing per task, worktree branches and the sessions[]
 * of peers, supervisors and children are shown when present.
 */
const LenientTaskSchema = SummaryTaskSchema.partial().extend({ name: z.string(), status: z.string() });
const LenientSessionSchema = SummarySessionSchema.partial().extend({ status: z.string().nullable().optional() });
const LenientSummarySchema = SummarySchema.partial().extend({
  swarm: z.string(),
  totals: SummarySchema.shape.totals.partial().optional(),
  tasks: z.array(LenientTaskSchema),
  sessions: z.array(LenientSessionSchema).optional(),
});
export type LenientSummary = z.infer<typeof LenientSummarySchema>;

/** Why a record could not be read: there is none, it is not JSON, or it is not a cadre record. Each reader words it for its user. */
export type UnreadRecord = { problem: "missing" } | { problem: "not_json"; cause: Error } | { problem: "not_a_record"; cause: z.ZodError };

/** A record read: the summary with the journal's newer lines, and the journal's lines that could not be read, named. */
export interface ReadRecord<S> {
  record: S;
  unreadable: string[];
}

export interface ReadRecordOptions {
  /** Read with the dashboard's schema, which opens records of older and newer cadre versions. */
  lenient?: boolean;
  /** Bring the summary up to date from the journal's newer lines (default); false when only the summary's own fields are needed. */
  journal?: boolean;
}

/**
 * summary.json of a run directory, with what ended since its last
 * compaction (a run going on, or killed, has ended tasks its summary does
 * not have yet), or why it cannot be read.
 */
export async function readRecord(dir: string, options: ReadRecordOptions & { lenient: true }): Promise<ReadRecord<LenientSummary> | UnreadRecord>;
export async function readRecord(dir: string, options?: ReadRecordOptions & { lenient?: false }): Promise<ReadRecord<Summary> | UnreadRecord>;
export async function readRecord(dir: string, options: ReadRecordOptions = {}): Promise<ReadRecord<Summary | LenientSummary> | UnreadRecord> {
  const text = await readFile(join(dir, SUMMARY_FILE), "utf8").catch(() => undefined);
  if (text === undefined) return { problem: "missing" };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { problem: "not_json", cause: error as Error };
  }
  const parsed = (options.lenient ? LenientSummarySchema : SummarySchema).safeParse(data);
  if (!parsed.success) return { problem: "not_a_record", cause: parsed.error };
  if (options.journal === false) return { record: parsed.data, unreadable: [] };
  const journal = await readJournal(dir);
  return { record: withJournal(parsed.data, journal.values), unreadable: journal.unreadable };
}
