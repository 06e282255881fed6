/**
 * One run of a swarm file, without a terminal: its engine (the orchestrator
 * here, or the hosts of a distributed run), its worktrees, and its record
 * (summary.json), rewritten as each task ends and on every way out. The CLI
 * renders its events and turns its outcome into an exit code; a library
 * caller iterates the same events, or awaits `runSwarmFile()`.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { AbortError } from "../errors.ts";
import { type OrchestratorEvent, sessionIdOf, type TaskInfo, type TaskResult } from "../orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../swarm/config/index.ts";
import type { TaskFingerprint } from "../swarm/fingerprint.ts";
import type { Summary, SummaryTask } from "../swarm/record.ts";
import { INTERRUPTED, newRunId, runSwarm, type SwarmEvent, unrunResult } from "../swarm/runner.ts";
import { RunWorktrees, type WorktreeOutcome } from "../swarm/worktree.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { type RunEngine, startEngine } from "./engine.ts";
import { buildSummary, type RunStop, type TaskProgress, writeSummarySync } from "./record.ts";
import type { ResumePlan } from "./resume.ts";

/** What a run tells: the orchestrator's events and the swarm's. */
export type RunEvent = OrchestratorEvent | SwarmEvent;

export interface SwarmRunOptions {
  /** Where summary.json, the transcripts and a rehearsal's HOME go; made if missing. A resumed run uses the plan's. */
  outDir: string;
  /** Overrides the config's concurrency. */
  concurrency?: number;
  /** Play the config's rehearsal scripts on a scripted model: offline, no account, simulated costs. */
  rehearse?: boolean;
  /** With `rehearse`: apply budget_usd to the simulated costs (a rehearsal applies no budget otherwise). */
  rehearseBudget?: boolean;
  /** Run the tasks on the hosts that serve this Redis (`cadre worker`), as the run of this id. */
  redis?: { url: string; runId: string };
  /** Go on with an earlier run (see planResume). */
  resume?: ResumePlan;
  /** For a traced run on Redis hosts: the trace context (a W3C traceparent) each task's job carries, so the hosts' spans join the run's trace. */
  traceContext?: (task: TaskInfo) => string | undefined;
}

/** The budget a run applies: a rehearsal shows what would run, and its made-up costs stop it only when asked. */
function appliedBudget(config: ResolvedSwarmConfig, options: SwarmRunOptions): number | undefined {
  return options.rehearse && !options.rehearseBudget ? undefined : config.budget_usd;
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
  readonly #engine: RunEngine;
  readonly #worktrees: RunWorktrees;
  readonly #results = new Map<string, TaskResult>();
  readonly #fingerprints = new Map<string, TaskFingerprint>();
  readonly #carriedOver = new Map<string, SummaryTask>();
  readonly #worktreeOutcomes = new Map<string, WorktreeOutcome>();
  readonly #running = new Map<string, TaskProgress>();
  #finishedAt: number | undefined;

  private constructor(
    config: ResolvedSwarmConfig,
    options: SwarmRunOptions,
    outDir: string,
    budgetUsd: number | undefined,
    engine: RunEngine,
    started: { at: number; runId: string },
  ) {
    this.config = config;
    this.outDir = outDir;
    this.budgetUsd = budgetUsd;
    this.rehearsal = options.rehearse ?? false;
    this.resume = options.resume;
    this.#engine = engine;
    this.startedAt = started.at;
    this.runId = started.runId;
    this.#worktrees = new RunWorktrees(this.runId, config.keep_worktrees);
  }

  /**
   * Makes the output directory and starts the engine (a Redis that cannot be
   * reached rejects here, with a CadreError). Nothing runs until `events()`.
   */
  static async start(config: ResolvedSwarmConfig, options: SwarmRunOptions): Promise<SwarmRun> {
    // Absolute: workers run in other directories, and a relative HOME or transcript path would land there.
    const outDir = resolve(options.resume?.dir ?? options.outDir);
    await mkdir(outDir, { recursive: true });
    const budgetUsd = appliedBudget(config, options);
    // Known before the engine starts, so that its workers can be told which run they work for.
    const startedAt = Date.now();
    const runId = newRunId(new Date(startedAt));
    const engine = await startEngine(
      config,
      {
        rehearse: options.rehearse ?? false,
        concurrency: options.concurrency,
        budgetUsd,
        redis: options.redis,
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

  /** Problems to report once the run is over (scripted-model warnings, a lost Redis). */
  warnings(): readonly string[] {
    return this.#engine.warnings();
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
    const unsubscribe = this.#engine.on((event) => {
      this.#observe(event);
      queue.push(event);
    });
    const driving = this.#drive(AbortSignal.any([signal, leaving.signal]), queue).finally(unsubscribe);
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
      this.writeRecord(undefined);
      for await (const event of runSwarm({
        config: this.config,
        orchestrator: this.#engine,
        signal,
        worktrees: this.#worktrees,
        ...(this.resume && { carryOver: this.resume.carryOver }),
      })) {
        if (event.type === "task_settled") this.#settle(event);
        else if (event.type === "task_ready") this.#fingerprints.set(event.task.name, event.fingerprint);
        queue.push(event);
      }
    } catch (error) {
      failure = { error };
    } finally {
      // Every worker, peer and supervisor process ends here (their last events still reach the queue), and the transcripts are flushed.
      await this.#engine.close();
      await this.#worktrees.dispose();
      this.#finishedAt = Date.now();
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
    this.writeRecord(undefined);
  }

  #settle(event: Extract<SwarmEvent, { type: "task_settled" }>): void {
    const name = event.task.name;
    this.#running.delete(name);
    this.#results.set(name, event.result);
    if (event.worktree !== undefined) this.#worktreeOutcomes.set(name, event.worktree);
    if (event.fingerprint) this.#fingerprints.set(name, event.fingerprint);
    const earlier = event.carriedOver ? this.resume?.previous.tasks.find((task) => task.name === name) : undefined;
    if (earlier) this.#carriedOver.set(name, earlier);
    this.writeRecord(undefined);
  }

  /** The record as it stands, with `stop` as what stopped the run (if anything did). */
  summary(stop: RunStop | undefined): Summary {
    return buildSummary({
      config: this.config,
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
      budgetUsd: this.budgetUsd,
      startedAt: this.startedAt,
      finishedAt: this.#finishedAt ?? Date.now(),
      stop,
      fingerprints: this.#fingerprints,
      carriedOver: this.#carriedOver,
      attempt: this.attempt,
      ...(this.resume && { previous: this.resume.previous }),
    });
  }

  /** Writes summary.json (atomically) and returns it with its path. */
  writeRecord(stop: RunStop | undefined): { summary: Summary; path: string } {
    const summary = this.summary(stop);
    return { summary, path: writeSummarySync(this.outDir, summary) };
  }

  /**
   * Ends the run at once, synchronously (a second Ctrl-C, a process about to
   * exit): kills every worker here, discards the worktrees, records each task
   * that has no result as cancelled, and writes the record.
   */
  kill(stop: RunStop): { summary: Summary; path: string } {
    this.#engine.kill();
    this.#worktrees.discardSync();
    for (const task of this.config.tasks) {
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
    await this.#engine.close();
  }
}
