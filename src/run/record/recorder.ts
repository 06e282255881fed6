// A run's record as the run goes: a journal line as a task's session starts and as it ends, summary.json compacted from them, and written on every way out.
import { join } from "node:path";
import type { SessionRecord, TaskResult, Usage } from "../../orchestrator/index.ts";
import type { Divergence } from "../../rehearsal/index.ts";
import type { AddedTask, LoopEndedEvent, TaskFingerprint, TaskSettledEvent, WorktreeOutcome } from "../../swarm/index.ts";
import { RunJournal } from "./journal-appender.ts";
import { SUMMARY_FILE, type Summary, type SummarySteering, type SummaryTask } from "./schema.ts";
import {
  buildSummary,
  type RecordExtension,
  type RecordedPlan,
  RecordWriteError,
  type RowInput,
  type RunStop,
  removeHalfWritten,
  type SummaryInput,
  type TaskProgress,
  taskRow,
  writeSummarySync,
} from "./summary.ts";

/**
 * The record could not be written (a full disk, a read-only directory), told
 * once: the run goes on, and each later write tries again; or it could be
 * written again after that.
 */
export type RecordEvent = { type: "record_unwritten"; path: string; message: string } | { type: "record_written_again"; path: string };

/** What the record reads of whatever runs the tasks: what it spent, its other sessions, where their transcripts went, which host ran what. */
export interface RecordSource {
  readonly totals: { costUsd: number; usage: Usage };
  readonly sessionRecords: readonly SessionRecord[];
  readonly transcriptPaths: ReadonlyMap<string, string>;
  readonly hosts?: ReadonlyMap<string, string>;
}

export interface RecorderOptions {
  /** The plan's name, file, tasks and loops: what the record lists before anything runs. */
  plan: RecordedPlan;
  /** What the plan adds to the record (a workflow's calls and result). */
  extension?: RecordExtension;
  /** The run directory (absolute), made and checked already. */
  outDir: string;
  runId: string;
  startedAt: number;
  rehearsal: boolean;
  budgetUsd: number | undefined;
  /** This attempt's number (1 without --resume). */
  attempt: number;
  /** The record of the run this attempt resumes. */
  previous?: Summary;
  /** The traceparent of this attempt's run span, kept so that a resumed run's span links to it. */
  traceparent?: string;
  /** A replay: the run it replays, and where it has left that run's record so far. */
  replay?: { of: NonNullable<Summary["replay"]>["of"]; divergences: () => readonly Divergence[] };
  source: RecordSource;
  /** The record cannot be written, or can again: told once each time. */
  onTrouble: (event: RecordEvent) => void;
}

/** How often summary.json may be compacted from the journal while the run goes on. */
const COMPACT_EVERY_MS = 3_000;
/**
 * ...and only once the journal has grown by this share of the summary's size
 * since: rewriting the summary then costs each task's end a constant share
 * of bytes and CPU, however many tasks the run has.
 */
const COMPACT_GROWTH = 1 / 2;

/**
 * Keeps a run's record as it goes, from what the run tells it (a task
 * started, its session became known, it ended; tasks were made; a loop
 * ended). It knows nothing of how tasks are run: any plan that tells it
 * these things has the same record, journal and resume.
 */
export class RunRecorder {
  readonly #options: RecorderOptions;
  readonly #results = new Map<string, TaskResult>();
  /** Every task by name: the plan's, and those the run made (copies, rounds), whose rows the journal keeps too. */
  readonly #tasksByName: Map<string, AddedTask>;
  readonly #fingerprints = new Map<string, TaskFingerprint>();
  readonly #carriedOver = new Map<string, SummaryTask>();
  readonly #worktreeOutcomes = new Map<string, WorktreeOutcome>();
  readonly #running = new Map<string, TaskProgress>();
  /** The tasks the run made as it went (for_each copies, loop rounds), and the loops that ended. */
  readonly #added: AddedTask[] = [];
  readonly #loopsEnded = new Map<string, LoopEndedEvent>();
  readonly #steering: SummarySteering[] = [];
  /** The rows of the run being resumed, by name. */
  readonly #previousRows: ReadonlyMap<string, SummaryTask>;
  readonly #journal: RunJournal;
  readonly #compactTimer: ReturnType<typeof setInterval>;
  /** The finished_at of the summary last written: journal lines after it are not in it. */
  #compactedAt = Number.NEGATIVE_INFINITY;
  #compactedBytes = 0;
  #journalBytesAtCompaction = 0;
  #finishedAt: number | undefined;
  /** Why the last write of the record failed, while it keeps failing. */
  #unwritten: RecordWriteError | undefined;

  constructor(options: RecorderOptions) {
    this.#options = options;
    this.#tasksByName = new Map<string, AddedTask>(options.plan.tasks.map((task) => [task.name, task]));
    this.#previousRows = new Map(options.previous?.tasks.map((task) => [task.name, task]));
    removeHalfWritten(options.outDir);
    this.#journal = new RunJournal(options.outDir);
    this.#compactTimer = setInterval(() => this.#compact(), COMPACT_EVERY_MS);
    this.#compactTimer.unref();
  }

  /** Whether a task has its result. */
  ended(name: string): boolean {
    return this.#results.has(name);
  }

  /** A task took a slot (again, on a retry: its first start counts). */
  taskStarted(name: string, at: number): void {
    const progress = this.#running.get(name);
    this.#running.set(name, { startedAt: progress?.startedAt ?? at, sessionId: progress?.sessionId });
  }

  /** A running task's claude session became known: journalled at once, so that even a SIGKILL leaves the session to resume. */
  sessionKnown(name: string, sessionId: string): void {
    const progress = this.#running.get(name);
    if (progress === undefined || sessionId === progress.sessionId) return;
    progress.sessionId = sessionId;
    this.#journalRow(name);
  }

  /**
   * The engine has a task's result, before the plan acts on it (its dependents, its worktree's commit): journalled at
   * once, so that a SIGKILL right after the task's last reply leaves the result, and a resume never asks for it again.
   * task_settled journals the row again with what the plan adds.
   */
  taskFinished(name: string, result: TaskResult): void {
    if (!this.#tasksByName.has(name)) return;
    this.#running.delete(name);
    this.#results.set(name, result);
    this.#journalRow(name);
  }

  /**
   * A task's worktree was made (or, for a run killed outright, committed and removed): its row names the branch
   * and where the worktree is, journalled at once, so that a SIGKILL leaves the work found.
   */
  worktreeOpened(name: string, worktree: { branch: string | null; base: string; path: string | null }): void {
    if (!this.#tasksByName.has(name)) return;
    this.#worktreeOutcomes.set(name, { branch: worktree.branch, commit: null, base: worktree.base, diffStat: "", path: worktree.path });
    this.#journalRow(name);
  }

  /**
   * A task was handed to the runner with what its result will depend on. The plan tells it after the engine may have
   * told the task's session: a row journalled without it is journalled again, so a resume can tell the task's work the
   * same and continue its session.
   */
  taskReady(name: string, fingerprint: TaskFingerprint): void {
    this.#fingerprints.set(name, fingerprint);
    if (this.#running.get(name)?.sessionId !== undefined) this.#journalRow(name);
  }

  /**
   * The run made tasks. A map's copies or a loop's round change the row of
   * what made them: the record is written again (few such writes, and a
   * resume needs them all). A task made on its own (a script's agent() call,
   * one of thousands) needs only its own line in the journal.
   */
  tasksAdded(tasks: readonly AddedTask[]): void {
    this.#added.push(...tasks);
    for (const task of tasks) this.#tasksByName.set(task.name, task);
    if (tasks.some((task) => task.copy_of !== undefined || task.round_of !== undefined)) this.rewrite();
    else for (const task of tasks) this.#journalRow(task.name);
  }

  /** A user reached a running task (a message, an interrupt, a stop): kept in order, and the record written at once. */
  taskSteered(entry: SummarySteering): void {
    this.#steering.push(entry);
    this.rewrite();
  }

  /** The agent of `task` took in the oldest message sent to it that it had not: that message reached it at `step`. */
  steerTaken(task: string, step: number): void {
    const entry = this.#steering.find((each) => each.task === task && each.action === "send" && each.step === undefined);
    if (entry === undefined) return;
    entry.step = step;
    this.rewrite();
  }

  loopEnded(event: LoopEndedEvent): void {
    this.#loopsEnded.set(event.loop, event);
    this.rewrite();
  }

  /** A task has its result: its row goes to the journal (a result kept from the earlier attempt keeps that attempt's row, under this name). */
  taskSettled(event: Pick<TaskSettledEvent, "task" | "result" | "worktree" | "fingerprint" | "carriedOver" | "carriedFrom">): void {
    const name = event.task.name;
    this.#running.delete(name);
    this.#results.set(name, event.result);
    if (event.worktree !== undefined) this.#worktreeOutcomes.set(name, event.worktree);
    if (event.fingerprint) this.#fingerprints.set(name, event.fingerprint);
    const earlier = event.carriedOver && event.carriedFrom !== null ? this.#previousRows.get(event.carriedFrom ?? name) : undefined;
    if (earlier) this.#carriedOver.set(name, { ...earlier, name, carried_from: earlier.carried_from ?? this.#ranIn(earlier) });
    this.#journalRow(name);
  }

  /** The attempt of the resumed run that ran a row it kept (an older record, which says not where a row it kept came from: the run alone). */
  #ranIn(row: SummaryTask): NonNullable<SummaryTask["carried_from"]> {
    const { previous } = this.#options;
    return { run_id: previous?.run_id ?? this.#options.runId, ...(!row.carried_over && { attempt: previous?.attempt ?? 1 }) };
  }

  /**
   * Every task without a result gets `unrun(task)` (a run killed at once),
   * keeping the start and session of one that was running, so that --resume
   * continues it.
   */
  settleUnended(unrun: (task: AddedTask) => TaskResult): void {
    for (const task of [...this.#options.plan.tasks, ...this.#added]) {
      if (this.#results.has(task.name)) continue;
      const result = unrun(task);
      const progress = this.#running.get(task.name);
      this.#results.set(task.name, progress ? { ...result, startedAt: progress.startedAt, sessionId: progress.sessionId } : result);
    }
  }

  /** The run has ended (at `at`, when it did): no more compactions, the journal is synced and closed (the last record follows). */
  finish(at?: number): void {
    if (at !== undefined) this.#finishedAt = at;
    clearInterval(this.#compactTimer);
    this.#journal.close();
  }

  /** Appends a task's row as it stands to the journal. */
  #journalRow(name: string): void {
    const task = this.#tasksByName.get(name);
    if (task === undefined) return;
    // A journal that cannot be written (a full disk): the whole record instead, which says once that it cannot be written either.
    if (!this.#journal.append(this.#options.attempt, taskRow(this.#rowInput(), task), this.#compactedAt)) this.rewrite();
  }

  #rowInput(): RowInput {
    const { source, outDir } = this.#options;
    return {
      results: this.#results,
      running: this.#running,
      fingerprints: this.#fingerprints,
      carriedOver: this.#carriedOver,
      transcripts: source.transcriptPaths,
      ...(source.hosts && { hosts: source.hosts }),
      worktrees: this.#worktreeOutcomes,
      outDir,
      ...(this.#options.extension && { extension: this.#options.extension }),
    };
  }

  /**
   * Rewrites summary.json from what the journal has that it lacks, when the
   * journal has grown enough since the last time (see COMPACT_GROWTH). A
   * compaction that fails is not needed: the journal has every line, and the
   * next one (or the last record) tries again.
   */
  #compact(): void {
    const grown = this.#journal.bytes - this.#journalBytesAtCompaction;
    if (this.#finishedAt !== undefined || grown === 0 || grown < this.#compactedBytes * COMPACT_GROWTH) return;
    try {
      this.#writeSummary(this.#summaryInput(undefined));
    } catch {
      // See above.
    }
  }

  /** Writes summary.json as `input` has it; the journal's lines from here on are newer than it. Throws a RecordWriteError. */
  #writeSummary(input: SummaryInput): string {
    this.#compactedAt = input.finishedAt;
    const journalBytes = this.#journal.bytes;
    this.#journal.sync();
    const { path, bytes } = writeSummarySync(this.#options.outDir, input);
    this.#compactedBytes = bytes;
    this.#journalBytesAtCompaction = journalBytes;
    return path;
  }

  /** The record as it stands, with `stop` as what stopped the run (if anything did). */
  summary(stop: RunStop | undefined): Summary {
    return buildSummary(this.#summaryInput(stop));
  }

  #summaryInput(stop: RunStop | undefined): SummaryInput {
    const { plan, source, previous, traceparent, replay } = this.#options;
    return {
      config: plan,
      ...(this.#options.extension && { extension: this.#options.extension }),
      added: this.#added,
      loopsEnded: this.#loopsEnded,
      steering: this.#steering,
      results: this.#results,
      running: this.#running,
      totals: source.totals,
      sessions: source.sessionRecords,
      transcripts: source.transcriptPaths,
      ...(source.hosts && { hosts: source.hosts }),
      worktrees: this.#worktreeOutcomes,
      runId: this.#options.runId,
      outDir: this.#options.outDir,
      rehearsal: this.#options.rehearsal,
      ...(replay && { replay: { of: replay.of, divergences: replay.divergences().map((divergence) => ({ ...divergence })) } }),
      budgetUsd: this.#options.budgetUsd,
      startedAt: this.#options.startedAt,
      finishedAt: this.#finishedAt ?? Date.now(),
      stop,
      fingerprints: this.#fingerprints,
      carriedOver: this.#carriedOver,
      attempt: this.#options.attempt,
      traces: [...(previous?.traces ?? []), ...(traceparent !== undefined ? [traceparent] : [])],
      ...(previous && { previous }),
    };
  }

  /**
   * Writes summary.json (atomically) and returns it with its path. A write
   * that fails (a full disk) does not stop the run: `error` says why, the file
   * stays as last written, and the next write tries again.
   */
  writeRecord(stop: RunStop | undefined): { summary: Summary; path: string; error?: RecordWriteError } {
    const input = this.#summaryInput(stop);
    const written = this.#writeRecordOf(input);
    return { summary: buildSummary(input), ...written };
  }

  /** Writes the record as it stands now (the caller writes the last one, with what stopped the run). */
  rewrite(): void {
    this.#writeRecordOf(this.#summaryInput(undefined));
  }

  /** Writes the record, telling once that it cannot be written, and once that it can again. */
  #writeRecordOf(input: SummaryInput): { path: string; error?: RecordWriteError } {
    try {
      const path = this.#writeSummary(input);
      if (this.#unwritten !== undefined) this.#options.onTrouble({ type: "record_written_again", path });
      this.#unwritten = undefined;
      return { path };
    } catch (error) {
      if (!(error instanceof RecordWriteError)) throw error;
      const path = join(this.#options.outDir, SUMMARY_FILE);
      if (this.#unwritten === undefined) this.#options.onTrouble({ type: "record_unwritten", path, message: error.message });
      this.#unwritten = error;
      return { path, error };
    }
  }
}
