/**
 * One run of a swarm file, without a terminal: its engine (the orchestrator
 * here, or the hosts of a distributed run), its worktrees, and its record:
 * a journal line as each task ends or its session starts, summary.json
 * compacted from it now and then and on every way out. The CLI
 * renders its events and turns its outcome into an exit code; a library
 * caller iterates the same events, or awaits `runSwarmFile()`.
 */
import { rmSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
// Needs no Redis client: a run without --redis never loads BullMQ.
import { REDIS_UNREACHABLE } from "../distributed/index.ts";
import { AbortError } from "../errors.ts";
import { type OrchestratorEvent, sessionIdOf, type TaskInfo, type TaskResult } from "../orchestrator/index.ts";
import type { Divergence } from "../rehearsal/index.ts";
import type { LoopEndedEvent, ResolvedSwarmConfig, Summary, SummaryTask, TaskFingerprint } from "../swarm/index.ts";
import {
  type AddedTask,
  INTERRUPTED,
  newRunId,
  RunWorktrees,
  runSwarm,
  SUMMARY_FILE,
  type SwarmEvent,
  unrunResult,
  type WorktreeOutcome,
} from "../swarm/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { type RunEngine, startEngine } from "./engine.ts";
import { RunJournal } from "./journal.ts";
import {
  buildSummary,
  prepareOutDir,
  RecordWriteError,
  type RowInput,
  type RunStop,
  type SummaryInput,
  type TaskProgress,
  taskRow,
  writeSummarySync,
} from "./record.ts";
import type { ReplayPlan } from "./replay/plan.ts";
import type { ResumePlan } from "./resume.ts";

/**
 * The record could not be written (a full disk, a read-only directory), told
 * once: the run goes on, and each later write tries again; or it could be
 * written again after that.
 */
export type RecordEvent = { type: "record_unwritten"; path: string; message: string } | { type: "record_written_again"; path: string };

/** What a run tells: the orchestrator's events, the swarm's, and its record's troubles. */
export type RunEvent = OrchestratorEvent | SwarmEvent | RecordEvent;

export interface SwarmRunOptions {
  /** Where summary.json, the transcripts and a rehearsal's HOME go; made if missing. A resumed run uses the plan's. */
  outDir: string;
  /** Overrides the config's concurrency. */
  concurrency?: number;
  /** Play the config's rehearsal scripts on a scripted model: offline, no account, simulated costs. */
  rehearse?: boolean;
  /** With `rehearse`: apply budget_usd to the simulated costs (a rehearsal applies no budget otherwise). */
  rehearseBudget?: boolean;
  /** Replay a recorded run (planReplay): its replies instead of the model, offline, in this process; simulated costs, as a rehearsal's. */
  replay?: ReplayPlan;
  /** Run the tasks on the hosts that serve this Redis (`cadre worker`), as the run of this id. */
  redis?: { url: string; runId: string };
  /** Go on with an earlier run (see planResume). */
  resume?: ResumePlan;
  /** Lines to tell the user as the run goes, beside its events (a distributed run's Redis trouble). */
  notify?: (line: string) => void;
  /** For a traced run on Redis hosts: the trace context (a W3C traceparent) each task's job carries, so the hosts' spans join the run's trace. */
  traceContext?: (task: TaskInfo) => string | undefined;
  /** For a traced run: its run span's traceparent, kept in the record so that a resumed run's span links to it. */
  traceparent?: string;
}

/**
 * The tasks an earlier record settled: under --redis their jobs are stale,
 * while those it left running or pending, or failed only because the
 * coordinator lost Redis, may have finished on a host meanwhile.
 */
function settledBefore(plan: ResumePlan | undefined): { attempt: number; tasks: ReadonlySet<string> } | undefined {
  if (plan === undefined) return undefined;
  const open = (task: SummaryTask) => task.status === "running" || task.status === "pending" || task.error?.code === REDIS_UNREACHABLE;
  const tasks = plan.previous.tasks.filter((task) => !open(task)).map((task) => task.name);
  return { attempt: (plan.previous.attempt ?? 1) + 1, tasks: new Set(tasks) };
}

/** How often summary.json may be compacted from the journal while the run goes on. */
const COMPACT_EVERY_MS = 3_000;
/**
 * ...and only once the journal has grown by this share of the summary's size
 * since: rewriting the summary then costs each task's end a constant share
 * of bytes and CPU, however many tasks the run has.
 */
const COMPACT_GROWTH = 1 / 2;

/** The budget a run applies: a rehearsal shows what would run, and its made-up costs stop it only when asked. */
function appliedBudget(config: ResolvedSwarmConfig, options: SwarmRunOptions): number | undefined {
  return (options.rehearse || options.replay) && !options.rehearseBudget ? undefined : config.budget_usd;
}

export class SwarmRun {
  readonly config: ResolvedSwarmConfig;
  readonly outDir: string;
  readonly runId: string;
  readonly startedAt: number;
  /** The budget this run applies, once: the engine, the views and the record read it here. */
  readonly budgetUsd: number | undefined;
  readonly rehearsal: boolean;
  readonly resume: ResumePlan | undefined;
  readonly replay: ReplayPlan | undefined;
  readonly #engine: RunEngine;
  readonly #worktrees: RunWorktrees;
  readonly #results = new Map<string, TaskResult>();
  /** Every task by name: the config's, and those the run made (copies, rounds), whose rows the journal keeps too. */
  readonly #tasksByName: Map<string, AddedTask>;
  readonly #fingerprints = new Map<string, TaskFingerprint>();
  readonly #carriedOver = new Map<string, SummaryTask>();
  readonly #worktreeOutcomes = new Map<string, WorktreeOutcome>();
  readonly #running = new Map<string, TaskProgress>();
  /** The tasks the run made as it went (for_each copies, loop rounds), and the loops that ended. */
  readonly #added: AddedTask[] = [];
  readonly #loopsEnded = new Map<string, LoopEndedEvent>();
  /** The rows of the run being resumed, by name. */
  readonly #previousRows: ReadonlyMap<string, SummaryTask>;
  readonly #journal: RunJournal;
  readonly #compactTimer: ReturnType<typeof setInterval>;
  /** The finished_at of the summary last written: journal lines after it are not in it. */
  #compactedAt = Number.NEGATIVE_INFINITY;
  #compactedBytes = 0;
  #journalBytesAtCompaction = 0;
  #finishedAt: number | undefined;
  readonly #traceparent: string | undefined;
  /** Where the run's events go while they are iterated. */
  #queue: AsyncQueue<RunEvent> | undefined;
  /** Aborted when no task can run (no login, an API that cannot be reached): the run stops with exit 2. */
  readonly #refusal = new AbortController();
  /** Why the last write of the record failed, while it keeps failing. */
  #unwritten: RecordWriteError | undefined;

  private constructor(
    config: ResolvedSwarmConfig,
    options: SwarmRunOptions,
    outDir: string,
    budgetUsd: number | undefined,
    engine: RunEngine,
    started: { at: number; runId: string },
  ) {
    this.config = config;
    this.#tasksByName = new Map<string, AddedTask>(config.tasks.map((task) => [task.name, task]));
    this.outDir = outDir;
    this.budgetUsd = budgetUsd;
    this.rehearsal = (options.rehearse ?? false) || options.replay !== undefined;
    this.resume = options.resume;
    this.replay = options.replay;
    this.#traceparent = options.traceparent;
    this.#previousRows = new Map(options.resume?.previous.tasks.map((task) => [task.name, task]));
    this.#engine = engine;
    this.startedAt = started.at;
    this.runId = started.runId;
    this.#worktrees = new RunWorktrees(this.runId, config.keep_worktrees);
    this.#journal = new RunJournal(outDir);
    this.#compactTimer = setInterval(() => this.#compact(), COMPACT_EVERY_MS);
    this.#compactTimer.unref();
  }

  /**
   * Makes the output directory and starts the engine (a Redis that cannot be
   * reached rejects here, with a CadreError). Nothing runs until `events()`.
   */
  static async start(config: ResolvedSwarmConfig, options: SwarmRunOptions): Promise<SwarmRun> {
    // Absolute: workers run in other directories, and a relative HOME or transcript path would land there.
    const outDir = resolve(options.resume?.dir ?? options.outDir);
    await prepareOutDir(outDir);
    // What an earlier attempt's compaction left half written when it was killed.
    for (const name of await readdir(outDir))
      if (name.startsWith(`${SUMMARY_FILE}.`) && name.endsWith(".tmp")) rmSync(join(outDir, name), { force: true });
    const budgetUsd = appliedBudget(config, options);
    // Known before the engine starts, so that its workers can be told which run they work for.
    const startedAt = Date.now();
    // A distributed run has one id: Redis's, which --run-id takes to pick it up.
    const runId = options.redis?.runId ?? newRunId(new Date(startedAt));
    const engine = await startEngine(
      config,
      {
        rehearse: options.rehearse ?? false,
        ...(options.replay && { replay: options.replay.replies }),
        concurrency: options.concurrency,
        budgetUsd,
        redis: options.redis,
        rerun: settledBefore(options.resume),
        ...(options.notify && { notify: options.notify }),
        ...(options.traceContext && { traceContext: options.traceContext }),
      },
      outDir,
      runId,
    );
    return new SwarmRun(config, options, outDir, budgetUsd, engine, { at: startedAt, runId });
  }

  /** What the run is on, for its first line: live or rehearsal, here or on which Redis. */
  get description(): string {
    return this.#engine.description;
  }

  /** The limits in force and the slots in use (an in-process run only). */
  get scheduler(): RunEngine["scheduler"] {
    return this.#engine.scheduler;
  }

  /** This attempt's number: 1, and one more for each --resume. */
  get attempt(): number {
    return this.resume ? (this.resume.previous.attempt ?? 1) + 1 : 1;
  }

  /** What stopped the run from within, if something did: no task could run (no login, an API that cannot be reached); exit 2. */
  get stop(): RunStop | undefined {
    const refused = (this.#refusal.signal.reason as AbortError | undefined)?.cause as { message: string } | undefined;
    return refused ? { reason: refused.message, exitCode: 2 } : undefined;
  }

  /** Problems to report once the run is over (scripted-model warnings, a lost Redis). */
  warnings(): readonly string[] {
    return this.#engine.warnings();
  }

  /** A replay's divergences so far: where a session asked for a reply the record does not have. */
  divergences(): readonly Divergence[] {
    return this.#engine.divergences();
  }

  /**
   * Runs the tasks in dependency order and yields every event as it happens;
   * the record is rewritten as each task ends, so a run killed at any point
   * can be resumed. Aborting `signal` stops what runs (those tasks end as
   * cancelled); so does leaving the loop early. When the iteration ends,
   * every process of the run has ended and the transcripts are written.
   */
  async *events(signal: AbortSignal): AsyncGenerator<RunEvent, void, undefined> {
    const leaving = new AbortController();
    const queue = new AsyncQueue<RunEvent>();
    this.#queue = queue;
    const unsubscribe = this.#engine.on((event) => {
      this.#observe(event);
      queue.push(event);
    });
    const driving = this.#drive(AbortSignal.any([signal, leaving.signal, this.#refusal.signal]), queue).finally(unsubscribe);
    try {
      yield* queue;
    } finally {
      leaving.abort(new AbortError("the run", "its caller stopped reading its events"));
      await driving;
    }
  }

  async #drive(signal: AbortSignal, queue: AsyncQueue<RunEvent>): Promise<void> {
    let failure: { error: unknown } | undefined;
    try {
      // A record from the start: a run killed before any task ends can still be resumed.
      this.#rewrite();
      for await (const event of runSwarm({
        config: this.config,
        orchestrator: this.#engine,
        signal,
        worktrees: this.#worktrees,
        ...(this.resume && { carryOver: this.resume.carryOver }),
      })) {
        if (event.type === "task_settled") this.#settle(event);
        else if (event.type === "task_ready") this.#fingerprints.set(event.task.name, event.fingerprint);
        else if (event.type === "tasks_added" || event.type === "loop_ended") {
          if (event.type === "tasks_added") {
            this.#added.push(...event.tasks);
            for (const task of event.tasks) this.#tasksByName.set(task.name, task);
          } else this.#loopsEnded.set(event.loop, event);
          // The run's shape changed (a map's copies, a loop's round): few such writes, and a resume needs them all.
          this.#rewrite();
        }
        queue.push(event);
      }
    } catch (error) {
      failure = { error };
    } finally {
      // Every worker, peer and supervisor process ends here (their last events still reach the queue), and the transcripts are flushed.
      await this.#engine.close();
      await this.#worktrees.dispose();
      this.#finishedAt = Date.now();
      this.#end();
      // The record complete however the run ended (the caller writes it once more with what stopped it).
      try {
        this.#rewrite();
      } catch (error) {
        failure ??= { error };
      }
      if (failure) queue.fail(failure.error);
      else queue.end();
    }
  }

  /**
   * Follows the config tasks' starts and sessions (not their children's): the
   * record says which are running, and is written again as soon as a task's
   * session is known, so even a SIGKILL leaves the session to resume.
   */
  #observe(event: OrchestratorEvent): void {
    if (event.type === "access_refused") {
      // The refusal rides along as the cause: the task that found it out failed of it, which is no interruption.
      this.#refusal.abort(new AbortError("the run", event.error));
      return;
    }
    if (!("task" in event) || event.task.parentId !== undefined || this.#results.has(event.task.name)) return;
    const name = event.task.name;
    if (event.type === "task_started") {
      const progress = this.#running.get(name);
      this.#running.set(name, { startedAt: progress?.startedAt ?? event.startedAt, sessionId: progress?.sessionId });
      return;
    }
    if (event.type !== "task_message") return;
    const sessionId = sessionIdOf(event.message);
    const progress = this.#running.get(name);
    if (progress === undefined || sessionId === undefined || sessionId === progress.sessionId) return;
    progress.sessionId = sessionId;
    this.#journalRow(name);
  }

  #settle(event: Extract<SwarmEvent, { type: "task_settled" }>): void {
    const name = event.task.name;
    this.#running.delete(name);
    this.#results.set(name, event.result);
    if (event.worktree !== undefined) this.#worktreeOutcomes.set(name, event.worktree);
    if (event.fingerprint) this.#fingerprints.set(name, event.fingerprint);
    const earlier = event.carriedOver ? this.#previousRows.get(name) : undefined;
    if (earlier) this.#carriedOver.set(name, earlier);
    this.#journalRow(name);
  }

  /** Appends a task's row as it stands to the journal. */
  #journalRow(name: string): void {
    const task = this.#tasksByName.get(name);
    if (task === undefined) return;
    // A journal that cannot be written (a full disk): the whole record instead, which says once that it cannot be written either.
    if (!this.#journal.append(this.attempt, taskRow(this.#rowInput(), task), this.#compactedAt)) this.#rewrite();
  }

  #rowInput(): RowInput {
    return {
      results: this.#results,
      running: this.#running,
      fingerprints: this.#fingerprints,
      carriedOver: this.#carriedOver,
      transcripts: this.#engine.transcriptPaths,
      ...(this.#engine.hosts && { hosts: this.#engine.hosts }),
      worktrees: this.#worktreeOutcomes,
      outDir: this.outDir,
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
    const { path, bytes } = writeSummarySync(this.outDir, input);
    this.#compactedBytes = bytes;
    this.#journalBytesAtCompaction = journalBytes;
    return path;
  }

  /** The run has ended: no more compactions, the journal is synced and closed (the last record follows). */
  #end(): void {
    clearInterval(this.#compactTimer);
    this.#journal.close();
  }

  /** The record as it stands, with `stop` as what stopped the run (if anything did). */
  summary(stop: RunStop | undefined): Summary {
    return buildSummary(this.#summaryInput(stop));
  }

  #summaryInput(stop: RunStop | undefined): SummaryInput {
    return {
      config: this.config,
      added: this.#added,
      loopsEnded: this.#loopsEnded,
      results: this.#results,
      running: this.#running,
      totals: this.#engine.totals,
      sessions: this.#engine.sessionRecords,
      transcripts: this.#engine.transcriptPaths,
      ...(this.#engine.hosts && { hosts: this.#engine.hosts }),
      worktrees: this.#worktreeOutcomes,
      runId: this.runId,
      outDir: this.outDir,
      rehearsal: this.rehearsal,
      ...(this.replay && { replay: { of: this.replay.of, divergences: this.#engine.divergences().map((divergence) => ({ ...divergence })) } }),
      budgetUsd: this.budgetUsd,
      startedAt: this.startedAt,
      finishedAt: this.#finishedAt ?? Date.now(),
      stop,
      fingerprints: this.#fingerprints,
      carriedOver: this.#carriedOver,
      attempt: this.attempt,
      traces: [...(this.resume?.previous.traces ?? []), ...(this.#traceparent !== undefined ? [this.#traceparent] : [])],
      ...(this.resume && { previous: this.resume.previous }),
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
  #rewrite(): void {
    this.#writeRecordOf(this.#summaryInput(undefined));
  }

  /** Writes the record, telling once that it cannot be written, and once that it can again. */
  #writeRecordOf(input: SummaryInput): { path: string; error?: RecordWriteError } {
    try {
      const path = this.#writeSummary(input);
      if (this.#unwritten !== undefined) this.#queue?.push({ type: "record_written_again", path });
      this.#unwritten = undefined;
      return { path };
    } catch (error) {
      if (!(error instanceof RecordWriteError)) throw error;
      const path = join(this.outDir, SUMMARY_FILE);
      if (this.#unwritten === undefined) this.#queue?.push({ type: "record_unwritten", path, message: error.message });
      this.#unwritten = error;
      return { path, error };
    }
  }

  /**
   * Ends the run at once, synchronously (a second Ctrl-C, a process about to
   * exit): kills every worker here, discards the worktrees, records each task
   * that has no result as cancelled, and writes the record.
   */
  kill(stop: RunStop): ReturnType<SwarmRun["writeRecord"]> {
    this.#engine.kill();
    this.#end();
    this.#worktrees.discardSync();
    for (const task of [...this.config.tasks, ...this.#added]) {
      if (this.#results.has(task.name)) continue;
      const unrun = unrunResult(task, "cancelled", { code: INTERRUPTED, message: "killed by a second signal" });
      // A task that was running keeps its session, so that --resume continues it.
      const progress = this.#running.get(task.name);
      this.#results.set(task.name, progress ? { ...unrun, startedAt: progress.startedAt, sessionId: progress.sessionId } : unrun);
    }
    return this.writeRecord(stop);
  }

  /** Ends a run whose events were never iterated (e.g. the dashboard could not open). */
  async close(): Promise<void> {
    this.#end();
    await this.#engine.close();
  }
}
