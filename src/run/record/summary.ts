// A run's record: summary.json built from the run's results, written atomically, and the exit code it implies.
import { closeSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { access, constants } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import process from "node:process";
import { CadreError } from "../../errors.ts";
import { addUsage, cacheSavingUsd, emptyUsage, type SessionRecord, type TaskResult, type Usage } from "../../orchestrator/index.ts";
import type { LoopEndedEvent, ResolvedSwarmConfig, TaskFingerprint, WorktreeOutcome } from "../../swarm/index.ts";
import { type AddedTask, skippedOnPurpose } from "../../swarm/index.ts";
import { makeDirectory } from "../../util/make-directory.ts";
import {
  AgentSpending,
  recordResultFields,
  recordUsage,
  SUMMARY_FILE,
  type Summary,
  type SummaryLoop,
  type SummarySession,
  type SummarySteering,
  type SummaryTask,
} from "./schema.ts";

/**
 * What stopped a run before its end, as the caller names it: a signal, or a
 * library caller's abort. Its exit code is the caller's to choose (the CLI
 * uses 128 + the signal's number).
 */
export interface RunStop {
  reason: string;
  exitCode: number;
}

/**
 * 0 every task succeeded (or was skipped on purpose: its condition was false), 1 some did not,
 * the stop's own code when something stopped the run.
 */
export function exitCodeFor(results: Iterable<TaskResult>, stop: RunStop | undefined): number {
  if (stop !== undefined) return stop.exitCode;
  for (const result of results) if (result.status !== "succeeded" && !skippedOnPurpose(result)) return 1;
  return 0;
}

/**
 * What the record lists of a plan before anything runs: its name and file,
 * its tasks, and its loops. A swarm file's resolved config is one; any other
 * kind of plan names its tasks the same way.
 */
/** What the record keeps of a plan: its name, file, loops and tasks, and its agents' budgets (spend by agent). */
export type RecordedPlan = Pick<ResolvedSwarmConfig, "name" | "file" | "loops"> & {
  tasks: readonly AddedTask[];
  agents?: Readonly<Record<string, { budget_usd?: number | undefined }>>;
};

/**
 * What a kind of plan adds to its record beyond the rows every run has: a
 * workflow script's calls (label, phase, prompt, the value agent() returned)
 * on their rows, and its own fields (its script, result, logs), which may
 * decide `complete` and `exit_code` (a script that returned is a success
 * whatever its agents did).
 */
export interface RecordExtension {
  /** Fields of the row of the task `name`, given its result once it has one (a row kept from an earlier attempt keeps its own). */
  row(name: string, result: TaskResult | undefined): Partial<SummaryTask> | undefined;
  /** Fields of the record, given what stopped the run (if anything did). */
  fields(stop: RunStop | undefined): { complete?: boolean; exit_code?: number; [field: string]: unknown };
}

export interface SummaryInput {
  config: RecordedPlan;
  /** What the plan adds to the record, if it adds anything. */
  extension?: RecordExtension;
  /** The tasks the run made as it went (for_each copies, loop rounds), in the order they were made. */
  added?: readonly AddedTask[];
  /** By loop name, the loops that have ended. */
  loopsEnded?: ReadonlyMap<string, LoopEndedEvent>;
  /** By task name; a task without one is still running or waiting (the record is then not complete). */
  results: ReadonlyMap<string, TaskResult>;
  /** By task name, for tasks that have started but not ended: since when, and their session once it is known. */
  running?: ReadonlyMap<string, TaskProgress>;
  /** By task name, for the tasks that started or were carried over. */
  fingerprints?: ReadonlyMap<string, TaskFingerprint>;
  /** The rows of tasks whose result was kept from an earlier attempt: they stand in the record as they were. */
  carriedOver?: ReadonlyMap<string, SummaryTask>;
  /** This attempt's number (default 1: no --resume). */
  attempt?: number;
  /** The record of the run this attempt resumes: its totals, sessions and steering carry over. */
  previous?: Pick<Summary, "totals" | "sessions" | "steering">;
  /** What users sent this attempt's running tasks, in order. */
  steering?: readonly SummarySteering[];
  /** What the engine spent (the tasks and the sessions, when every session is listed). */
  totals: { costUsd: number; usage: Usage };
  /** Peers, supervisors and spawned children (Orchestrator.sessionRecords). */
  sessions: readonly SessionRecord[];
  /** Orchestrator task or session id → transcript file. */
  transcripts: ReadonlyMap<string, string>;
  /** Distributed runs: task or session id → the host that ran it. */
  hosts?: ReadonlyMap<string, string>;
  /** By task name, for tasks that worked in a worktree. */
  worktrees: ReadonlyMap<string, WorktreeOutcome>;
  runId: string;
  outDir: string;
  rehearsal: boolean;
  /** A replay: the run it replays, and its divergences so far. */
  replay?: NonNullable<Summary["replay"]>;
  /** The budget the run applied, if any. */
  budgetUsd: number | undefined;
  startedAt: number;
  finishedAt: number;
  /** The traceparents of the run spans of this attempt and the earlier ones. */
  traces?: readonly string[];
  /** What stopped the run, if something did. */
  stop: RunStop | undefined;
}

/** What a task's row needs of the run, without the rest (the journal writes one row at a time). */
export type RowInput = Pick<
  SummaryInput,
  "results" | "running" | "fingerprints" | "carriedOver" | "transcripts" | "hosts" | "worktrees" | "outDir" | "extension"
>;

/** The path of a transcript as the record names it: relative to the run directory. */
function transcriptOf(input: Pick<SummaryInput, "transcripts" | "outDir">, id: string): string | null {
  const path = input.transcripts.get(id);
  return path === undefined ? null : relative(input.outDir, path);
}

/**
 * A task's row in the record as it stands: its result, or running or pending.
 * `place` is where a task made at run time comes from (its copy or round) and
 * what a map or loop task made.
 */
export function taskRow(input: RowInput, task: AddedTask, place: Partial<SummaryTask> = placeOf(task)): SummaryTask {
  const kept = input.carriedOver?.get(task.name);
  // Where it stands now (a copy whose item moved in its list, a call made in another order) is this run's.
  if (kept !== undefined) return { ...kept, ...place, carried_over: true };
  const fingerprint = input.fingerprints?.get(task.name);
  const result = input.results.get(task.name);
  const extra = input.extension?.row(task.name, result);
  const worktree = input.worktrees.get(task.name);
  // A task still at work in its worktree: the record names the worktree and its branch, so that a kill leaves them found.
  if (result === undefined)
    return { ...unendedTask(task, input.running?.get(task.name), fingerprint), ...place, ...worktreeFields(worktree), ...extra };
  return {
    ...place,
    name: task.name,
    ...templateOf(task),
    agent: task.agent ?? null,
    ...recordResultFields(result),
    depends_on: task.depends_on,
    ...(task.when !== undefined && { when: task.when }),
    transcript: transcriptOf(input, result.id),
    ...(input.hosts && { host: input.hosts.get(result.id) ?? null }),
    ...worktreeFields(worktree),
    fingerprint: fingerprint ?? null,
    ...extra,
  };
}

function worktreeFields(worktree: WorktreeOutcome | undefined) {
  return (
    worktree !== undefined && {
      branch: worktree.branch,
      commit: worktree.commit,
      base: worktree.base,
      diff_stat: worktree.diffStat,
      worktree: worktree.path,
    }
  );
}

/** The record's task rows in order (a copy or a round follows the task it was made from), made one at a time. */
interface RecordRows {
  tasks: readonly AddedTask[];
  row(task: AddedTask): SummaryTask;
}

function recordRows(input: SummaryInput): RecordRows {
  const added = input.added ?? [];
  const made = madeBy(added);
  return {
    // A copy or a round follows the task it was made from; a task made on its own (a script's call) comes after the plan's.
    tasks: [
      ...input.config.tasks.flatMap((task) => [task, ...added.filter((copy) => (copy.copy_of ?? copy.round_of)?.task === task.name)]),
      ...added.filter((task) => task.copy_of === undefined && task.round_of === undefined),
    ],
    row: (task) => taskRow(input, task, { ...placeOf(task), ...made.get(task.name) }),
  };
}

function* eachRow(rows: RecordRows): Generator<SummaryTask> {
  for (const task of rows.tasks) yield rows.row(task);
}

/** The record, its `tasks` as given; its totals are counted over `rows` (the same rows, or the same made again one at a time). */
function summaryOf(input: SummaryInput, order: RecordRows, rows: Iterable<SummaryTask>, tasks: SummaryTask[]): Summary {
  const attemptSessions = input.sessions.map(
    (session): SummarySession => ({
      role: session.role,
      name: session.name,
      agent: session.agent ?? null,
      parent: session.parent ?? null,
      session_id: session.sessionId ?? null,
      cost_usd: session.costUsd,
      usage: recordUsage(session.usage),
      num_turns: session.numTurns,
      status: session.status ?? null,
      transcript: transcriptOf(input, session.id),
      ...(input.hosts && { host: input.hosts.get(session.id) ?? null }),
    }),
  );
  const sessions = [...(input.previous?.sessions ?? []).map((session) => ({ ...session, carried_over: true })), ...attemptSessions];
  const earlier = input.previous?.totals;
  // The whole run's totals: what earlier attempts spent, and what this one did (the tasks it ran, its sessions).
  const count = { tasks: 0, succeeded: 0, failed: 0, cancelled: 0, skipped: 0, tasksRun: 0 };
  let cacheSavedUsd = earlier?.cache_saved_usd ?? 0;
  let numTurns = earlier?.num_turns ?? 0;
  const ranNow = (entry: Pick<SummaryTask, "usage" | "cost_usd" | "num_turns">) => {
    cacheSavedUsd += cacheSavingUsd(entry.usage, entry.cost_usd);
    numTurns += entry.num_turns;
  };
  const spending = new AgentSpending(Object.fromEntries(Object.entries(input.config.agents ?? {}).map(([name, agent]) => [name, agent.budget_usd])));
  for (const row of rows) {
    spending.task(row);
    count.tasks++;
    if (row.status !== "running" && row.status !== "pending") count[row.status]++;
    if (row.carried_over) continue;
    ranNow(row);
    if (row.fingerprint !== null) count.tasksRun++;
  }
  for (const session of attemptSessions) ranNow(session);
  for (const session of sessions) spending.session(session);
  const usage = { ...input.totals.usage };
  if (earlier) addUsage(usage, earlier.usage);
  return {
    swarm: input.config.name,
    run_id: input.runId,
    config: input.config.file ?? "",
    rehearsal: input.rehearsal,
    cost_simulated: input.rehearsal,
    ...(input.replay && { replay: input.replay }),
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.finishedAt).toISOString(),
    duration_ms: input.finishedAt - input.startedAt,
    interrupted: input.stop !== undefined,
    complete: order.tasks.every((task) => input.results.has(task.name)),
    attempt: input.attempt ?? 1,
    ...(input.traces !== undefined && input.traces.length > 0 && { traces: [...input.traces] }),
    exit_code: exitCodeFor(input.results.values(), input.stop),
    budget_usd: input.budgetUsd ?? null,
    totals: {
      tasks: count.tasks,
      succeeded: count.succeeded,
      failed: count.failed,
      cancelled: count.cancelled,
      skipped: count.skipped,
      cost_usd: (earlier?.cost_usd ?? 0) + input.totals.costUsd,
      usage: recordUsage(usage),
      cache_saved_usd: cacheSavedUsd,
      num_turns: numTurns,
      by_agent: spending.byAgent,
    },
    attempt_totals: { tasks_run: count.tasksRun, cost_usd: input.totals.costUsd },
    tasks,
    sessions,
    ...steeringOf(input),
    ...(input.config.loops !== undefined && { loops: loopRows(input.config, input.added ?? [], input.loopsEnded) }),
    ...input.extension?.fields(input.stop),
  };
}

/** The record's steering: the earlier attempts', then this one's; nothing when no user sent anything. */
function steeringOf(input: SummaryInput): Pick<Summary, "steering"> {
  const steering = [...(input.previous?.steering ?? []), ...(input.steering ?? [])];
  return steering.length === 0 ? {} : { steering };
}

export function buildSummary(input: SummaryInput): Summary {
  const order = recordRows(input);
  const tasks = [...eachRow(order)];
  return summaryOf(input, order, tasks, tasks);
}

/** Where a task made at run time comes from: its for_each item, or its loop round. */
function placeOf(task: AddedTask): Partial<SummaryTask> {
  return {
    ...(task.item !== undefined && { item: task.item }),
    ...(task.copy_of !== undefined && { copy_of: task.copy_of.task, index: task.copy_of.index }),
    ...(task.round_of !== undefined && { round_of: task.round_of.task, round: task.round_of.round, loop: task.round_of.loop }),
    ...(task.posted !== undefined && { posted_by: task.posted.by, post_depth: task.posted.depth, prompt: task.prompt }),
  };
}

/** By task name: the copies a for_each over a result made, and the rounds a loop task ran. */
function madeBy(added: readonly AddedTask[]): Map<string, Partial<SummaryTask>> {
  const made = new Map<string, { copies?: string[]; rounds?: number }>();
  for (const task of added) {
    if (task.copy_of !== undefined) {
      const entry = made.get(task.copy_of.task) ?? {};
      entry.copies = [...(entry.copies ?? []), task.name];
      made.set(task.copy_of.task, entry);
    }
    if (task.round_of !== undefined) made.set(task.round_of.task, { rounds: task.round_of.round });
  }
  return made;
}

function loopRows(config: RecordedPlan, added: readonly AddedTask[], ended: ReadonlyMap<string, LoopEndedEvent> = new Map()): SummaryLoop[] {
  return (config.loops ?? []).map((loop) => {
    const end = ended.get(loop.name);
    const rounds = added.filter((task) => task.round_of?.loop === loop.name && task.round_of.task === loop.tasks[0]).length;
    return {
      name: loop.name,
      tasks: loop.tasks,
      until: loop.until.source,
      max_rounds: loop.max_rounds,
      status: end?.status ?? (rounds > 0 ? "running" : "pending"),
      rounds: end?.rounds ?? rounds,
      error: end?.error ?? null,
    };
  });
}

/** A task that has started and not ended: since when, and its claude session once the CLI has named it. */
export interface TaskProgress {
  startedAt: number;
  sessionId: string | undefined;
}

/** A for_each copy's group: the name as written, which its copies share. */
function templateOf(task: Pick<AddedTask, "name" | "template">): { template?: string } {
  return task.template === task.name ? {} : { template: task.template };
}

/** A task not ended when the record is written: running (its session, to resume) or pending. */
function unendedTask(task: AddedTask, progress: TaskProgress | undefined, fingerprint: TaskFingerprint | undefined): SummaryTask {
  return {
    name: task.name,
    ...templateOf(task),
    agent: task.agent ?? null,
    status: progress ? "running" : "pending",
    text: "",
    structured_output: null,
    cost_usd: 0,
    usage: recordUsage(emptyUsage()),
    num_turns: 0,
    queued_ms: 0,
    started_at: progress ? new Date(progress.startedAt).toISOString() : null,
    finished_at: null,
    duration_ms: 0,
    attempts: progress ? 1 : 0,
    session_id: progress?.sessionId ?? null,
    depends_on: task.depends_on,
    ...(task.when !== undefined && { when: task.when }),
    transcript: null,
    error: null,
    fingerprint: fingerprint ?? null,
  };
}

/** The record (or the directory it goes in) could not be written: why, in words a user can act on. */
export class RecordWriteError extends CadreError {
  constructor(message: string, cause: unknown) {
    super("RECORD_NOT_WRITTEN", message, { cause });
  }
}

/** What a failed write of `path` means to a user: a full disk, a read-only directory, or the system's own words. */
function recordWriteError(path: string, error: unknown): RecordWriteError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === "ENOSPC" || code === "EDQUOT"
      ? `the disk is full (${code})`
      : code === "EROFS"
        ? "the file system is read-only (EROFS)"
        : code === "EACCES" || code === "EPERM"
          ? `the directory is read-only for this user (${code})`
          : code === "ENOTDIR"
            ? `${(error as NodeJS.ErrnoException).path ?? "a part of it"} is not a directory (ENOTDIR)`
            : code === "ENOENT"
              ? `no directory can be made in ${dirname((error as NodeJS.ErrnoException).path ?? path)} (ENOENT)`
              : (error as Error).message;
  return new RecordWriteError(`cannot write ${path}: ${reason}`, error);
}

/**
 * Makes the output directory and checks that it can be written, before
 * anything runs. A read-only place is said to be one (a recursive mkdir there
 * fails with ENOENT, which would say nothing of the kind).
 */
export async function prepareOutDir(outDir: string): Promise<void> {
  try {
    makeDirectory(outDir);
    await access(outDir, constants.W_OK);
  } catch (error) {
    // Where a recursive mkdir failed with ENOENT, the nearest directory that exists says why.
    let cause = error;
    for (let place = dirname(outDir); (cause as NodeJS.ErrnoException).code === "ENOENT" && place !== dirname(place); place = dirname(place)) {
      const denied = await access(place, constants.W_OK).then(
        () => null,
        (why: unknown) => why,
      );
      if (denied === null) break;
      if ((denied as NodeJS.ErrnoException).code !== "ENOENT") cause = denied;
    }
    throw recordWriteError(outDir, cause);
  }
}

/** Removes what an earlier attempt's write of summary.json left half written when it was killed (see writeSummarySync). */
export function removeHalfWritten(outDir: string): void {
  for (const name of readdirSync(outDir))
    if (name.startsWith(`${SUMMARY_FILE}.`) && name.endsWith(".tmp")) rmSync(join(outDir, name), { force: true });
}

/** Where the rows go in the text of the record's other fields, written with no rows. */
const TASKS_SLOT = '\n  "tasks": []';
/** Rows are written to the file in pieces of about this many characters. */
const PIECE_CHARS = 256 * 1024;

/**
 * Writes summary.json whole or not at all (a temporary file renamed over
 * it), so a reader, or a resume after SIGKILL, never finds half a record.
 * The text is that of JSON.stringify(buildSummary(input), null, 2), but its
 * task rows are made, written and dropped one at a time: a record of ten
 * thousand tasks is never a graph of objects, nor one string, in memory
 * (a run's memory grew by the whole record at each compaction). Returns its
 * path and size. A write that fails throws a RecordWriteError; the record
 * is then as it was.
 */
export function writeSummarySync(outDir: string, input: SummaryInput): { path: string; bytes: number } {
  const path = join(outDir, SUMMARY_FILE);
  let bytes = 0;
  writeWholeSync(path, (fd) => {
    let piece = "";
    const write = (text: string, flush = false) => {
      piece += text;
      if (piece.length < PIECE_CHARS && !flush) return;
      writeFileSync(fd, piece);
      bytes += Buffer.byteLength(piece);
      piece = "";
    };
    const order = recordRows(input);
    // The totals come before the rows: counted over the rows made once, then the rows made again as they are written.
    const head = `${JSON.stringify(summaryOf(input, order, eachRow(order), []), null, 2)}\n`;
    const slot = head.indexOf(TASKS_SLOT) + TASKS_SLOT.length - 2;
    write(head.slice(0, slot));
    let first = true;
    for (const row of eachRow(order)) {
      write(`${first ? "[\n" : ",\n"}    ${JSON.stringify(row, null, 2).replaceAll("\n", "\n    ")}`);
      first = false;
    }
    write(first ? "[]" : "\n  ]");
    write(head.slice(slot + 2), true);
  });
  return { path, bytes };
}

/**
 * Writes a file of the record (summary.json, a script's copy) whole or not at
 * all: `fill` writes a temporary file, which is renamed over `path`, so that a
 * reader, or a resume after SIGKILL, never finds half of it. A write that
 * fails throws a RecordWriteError; the file is then as it was.
 */
export function writeWholeSync(path: string, fill: (fd: number) => void): void {
  const temporary = `${path}.${process.pid}.tmp`;
  let file: number | undefined;
  try {
    file = openSync(temporary, "w");
    fill(file);
    closeSync(file);
    file = undefined;
    renameSync(temporary, path);
  } catch (error) {
    if (file !== undefined) closeSync(file);
    // A full disk may have kept part of it: the space is better given back.
    rmSync(temporary, { force: true });
    throw recordWriteError(path, error);
  }
}
