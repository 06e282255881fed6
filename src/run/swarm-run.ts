/**
 * One run of a swarm file, without a terminal, driven: its engine (the
 * orchestrator here, or the hosts of a distributed run), its plan, its
 * worktrees, and its recorder, which keeps the record. The CLI renders its
 * events and turns its outcome into an exit code; a library caller iterates
 * the same events, or awaits `runSwarmFile()`.
 */
import { resolve } from "node:path";
import { AbortError } from "../errors.ts";
import { type BudgetUse, type OrchestratorEvent, type SteerOrigin, sessionIdOf, type TaskInfo } from "../orchestrator/index.ts";
import type { Divergence } from "../rehearsal/index.ts";
import type { LeftWorktree, ResolvedSwarmConfig } from "../swarm/index.ts";
import { INTERRUPTED, newRunId, RunWorktrees, type SwarmEvent, unrunResult } from "../swarm/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { type RunEngine, startEngine } from "./engine.ts";
import { type RunPlan, swarmPlan, type WorkflowRunEvent } from "./plan.ts";
import { type RecordEvent, RunRecorder } from "./record/recorder.ts";
import type { Summary } from "./record/schema.ts";
import { prepareOutDir, type RecordWriteError, type RunStop } from "./record/summary.ts";
import type { ReplayPlan } from "./replay/plan.ts";
import { attemptOf, type ResumePlan, settledBefore } from "./resume.ts";
import { RunTaskBoard } from "./task-board.ts";

/** What a run tells: the orchestrator's events, the plan's task events (and a script's own), and its record's troubles. */
export type RunEvent = OrchestratorEvent | SwarmEvent | WorkflowRunEvent | RecordEvent;

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

/** The config as a run applies it: a rehearsal shows what would run, and its made-up costs stop it only when asked (no budget applies else). */
function appliedConfig(config: ResolvedSwarmConfig, options: SwarmRunOptions): ResolvedSwarmConfig {
  if (!(options.rehearse || options.replay) || options.rehearseBudget) return config;
  const { budget_usd: _run, ...rest } = config;
  return {
    ...rest,
    agents: Object.fromEntries(Object.entries(config.agents).map(([name, { budget_usd: _agent, ...agent }]) => [name, agent])),
    tasks: config.tasks.map(({ budget_usd: _task, ...task }) => task),
  };
}

/**
 * Drives one run: starts its engine, lets its plan (the swarm file's graph,
 * plan.ts) hand tasks to it, and tells its recorder (record/recorder.ts)
 * what happens; the recorder keeps the record.
 */
export class SwarmRun {
  readonly config: ResolvedSwarmConfig;
  readonly outDir: string;
  readonly runId: string;
  readonly startedAt: number;
  /** The budget this run applies, once: the engine, the views and the record read it here. */
  readonly budgetUsd: number | undefined;
  readonly rehearsal: boolean;
  readonly resume: ResumePlan | undefined;
  /** This attempt's number: 1, and one more for each --resume. */
  readonly attempt: number;
  readonly replay: ReplayPlan | undefined;
  readonly #plan: RunPlan;
  readonly #engine: RunEngine;
  readonly #worktrees: RunWorktrees;
  readonly #recorder: RunRecorder;
  /** The tasks agents post, for a graph whose tasks may post. */
  readonly #board: RunTaskBoard | undefined;
  /** Where the run's events go while they are iterated. */
  #queue: AsyncQueue<RunEvent> | undefined;
  /** Aborted when no task can run (no login, an API that cannot be reached): the run stops with exit 2. */
  readonly #refusal = new AbortController();

  private constructor(
    config: ResolvedSwarmConfig,
    options: SwarmRunOptions,
    outDir: string,
    budgetUsd: number | undefined,
    engine: RunEngine,
    started: { at: number; runId: string },
    plan: RunPlan,
    board: RunTaskBoard | undefined,
  ) {
    this.config = config;
    this.#board = board;
    this.#plan = plan;
    this.outDir = outDir;
    this.budgetUsd = budgetUsd;
    this.rehearsal = (options.rehearse ?? false) || options.replay !== undefined;
    this.resume = options.resume;
    this.attempt = attemptOf(options.resume);
    this.replay = options.replay;
    this.#engine = engine;
    this.startedAt = started.at;
    this.runId = started.runId;
    this.#worktrees = new RunWorktrees(this.runId, config.keep_worktrees, (open) => this.#recorder.worktreeOpened(open.task, open));
    this.#recorder = new RunRecorder({
      plan: plan.outline,
      ...(plan.record && { extension: plan.record }),
      outDir,
      runId: this.runId,
      startedAt: this.startedAt,
      rehearsal: this.rehearsal,
      budgetUsd,
      attempt: this.attempt,
      ...(options.resume && { previous: options.resume.previous }),
      ...(options.traceparent !== undefined && { traceparent: options.traceparent }),
      ...(options.replay && { replay: { of: options.replay.of, divergences: () => engine.divergences() } }),
      source: engine,
      onTrouble: (event) => this.#queue?.push(event),
    });
  }

  /**
   * Makes the output directory and starts the engine (a Redis that cannot be
   * reached rejects here, with a CadreError). Nothing runs until `events()`.
   * The config's settings (agents, defaults, hooks, budget) configure the
   * engine; `plan` decides what runs when (the config's graph by default).
   */
  static async start(written: ResolvedSwarmConfig, options: SwarmRunOptions, plan?: RunPlan): Promise<SwarmRun> {
    const config = appliedConfig(written, options);
    // Absolute: workers run in other directories, and a relative HOME or transcript path would land there.
    const outDir = resolve(options.resume?.dir ?? options.outDir);
    await prepareOutDir(outDir);
    const budgetUsd = config.budget_usd;
    // Known before the engine starts, so that its workers can be told which run they work for.
    const startedAt = Date.now();
    // A distributed run has one id: Redis's, which --run-id takes to pick it up.
    const runId = options.redis?.runId ?? newRunId(new Date(startedAt));
    // Tasks may be posted into a swarm file's graph (a script is its own plan).
    const posts = plan === undefined && config.tasks.some((task) => task.post_tasks);
    const board = posts ? new RunTaskBoard(config, options.resume?.previous.tasks, options.concurrency ?? config.concurrency) : undefined;
    const engine = await startEngine(
      config,
      {
        rehearse: options.rehearse ?? false,
        ...(options.replay && { replay: options.replay.replies, replaySteering: options.replay.steering ?? [] }),
        concurrency: options.concurrency,
        budgetUsd,
        redis: options.redis,
        rerun: settledBefore(options.resume),
        ...(options.notify && { notify: options.notify }),
        ...(options.traceContext && { traceContext: options.traceContext }),
        ...(board && { taskBoard: board }),
      },
      outDir,
      runId,
    );
    const run = new SwarmRun(config, options, outDir, budgetUsd, engine, { at: startedAt, runId }, plan ?? swarmPlan(config), board);
    if (options.resume) await run.#worktrees.takeOver(leftWorktrees(options.resume.previous));
    return run;
  }

  /** What the run is on, for its first line: live or rehearsal, here or on which Redis. */
  get description(): string {
    return this.#engine.description;
  }

  /** The limits in force and the slots in use (an in-process run only). */
  get scheduler(): RunEngine["scheduler"] {
    return this.#engine.scheduler;
  }

  /** What stopped the run from within, if something did: no task could run (no login, an API that cannot be reached); exit 2. */
  get stop(): RunStop | undefined {
    const refused = (this.#refusal.signal.reason as AbortError | undefined)?.cause as { message: string } | undefined;
    return refused ? { reason: refused.message, exitCode: 2 } : undefined;
  }

  /**
   * Writes a message into the running turn of task `task` (a swarm task's name, a script's agent() row):
   * the agent takes it at its next step, and the task's result is its answer after it. The text is
   * data, sent verbatim. Resolves once it is written (on a distributed run, by the host that runs the
   * task); rejects with TaskNotRunningError when that task has no process now, and on a distributed run
   * with HostNotAnsweringError when that host does not answer.
   */
  async send(task: string, text: string, origin?: SteerOrigin): Promise<void> {
    await this.#engine.steering.sendToTask(task, text, origin);
  }

  /**
   * Ends task `task` as cancelled (its process and tools killed, its worktree and session kept; one that waits for a
   * slot ends without starting); the run goes on. Resolves as send does.
   */
  async stopTask(task: string, origin?: SteerOrigin): Promise<void> {
    await this.#engine.steering.stopTask(task, origin);
  }

  /** Ends the current turn of task `task`; the task ends as interrupted, its session kept for --resume. */
  async interrupt(task: string, origin?: SteerOrigin): Promise<void> {
    await this.#engine.steering.interruptTask(task, origin);
  }

  /** The tasks that send, stopTask and interrupt can reach now. */
  get runningTasks(): string[] {
    return this.#engine.steering.runningTaskNames;
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
    const recorder = this.#recorder;
    let failure: { error: unknown } | undefined;
    try {
      // A record from the start: a run killed before any task ends can still be resumed.
      recorder.rewrite();
      for await (const event of this.#plan.run({
        runner: this.#engine,
        signal,
        worktrees: this.#worktrees,
        ...(this.resume?.carryOver && { carryOver: this.resume.carryOver }),
        ...(this.#board && { posts: this.#board }),
        budgetStatus: (agent) => this.#budgetStatus(agent),
      })) {
        if (event.type === "task_settled") recorder.taskSettled(event);
        else if (event.type === "task_ready") recorder.taskReady(event.task.name, event.fingerprint);
        else if (event.type === "tasks_added") recorder.tasksAdded(event.tasks);
        else if (event.type === "loop_ended") recorder.loopEnded(event);
        // After the recorder: a post is answered once its task is in the record.
        this.#board?.observe(event);
        queue.push(event);
      }
    } catch (error) {
      failure = { error };
    } finally {
      this.#board?.close();
      // Every worker, peer and supervisor process ends here (their last events still reach the queue), and the transcripts are flushed.
      await this.#engine.close();
      await this.#worktrees.dispose();
      recorder.finish(Date.now());
      // The record complete however the run ended (the caller writes it once more with what stopped it).
      try {
        recorder.rewrite();
      } catch (error) {
        failure ??= { error };
      }
      if (failure) queue.fail(failure.error);
      else queue.end();
    }
  }

  /** The dollar budgets over work of `agent`: the orchestrator's; on Redis hosts, the run's against what the run has spent. */
  #budgetStatus(agent: string | undefined): BudgetUse[] {
    const fromEngine = this.#engine.budgetStatus?.(agent);
    if (fromEngine !== undefined) return fromEngine;
    const spentUsd = this.#engine.totals.costUsd;
    return this.budgetUsd === undefined ? [] : [{ scope: { kind: "run" }, limitUsd: this.budgetUsd, spentUsd }];
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
    if (!("task" in event) || event.task.parentId !== undefined || this.#recorder.ended(event.task.name)) return;
    if (event.type === "task_steered") {
      const { task, action, from, text, step, at } = event;
      this.#recorder.taskSteered({
        task: task.name,
        action,
        from: from ?? null,
        at: new Date(at).toISOString(),
        ...(text !== undefined && { text }),
        ...(step !== undefined && { step }),
      });
    } else if (event.type === "task_steer_taken") this.#recorder.steerTaken(event.task.name, event.step);
    else if (event.type === "task_started") this.#recorder.taskStarted(event.task.name, event.startedAt);
    // A task whose work still waits to be committed from its worktree is recorded once it is (task_settled).
    else if (event.type === "task_finished" && !this.#worktrees.holds(event.task.name)) this.#recorder.taskFinished(event.task.name, event.result);
    else if (event.type === "task_message") {
      const sessionId = sessionIdOf(event.message);
      if (sessionId !== undefined) this.#recorder.sessionKnown(event.task.name, sessionId);
    }
  }

  /** The record as it stands, with `stop` as what stopped the run (if anything did). */
  summary(stop: RunStop | undefined): Summary {
    return this.#recorder.summary(stop);
  }

  /**
   * Writes summary.json (atomically) and returns it with its path. A write
   * that fails (a full disk) does not stop the run: `error` says why, the file
   * stays as last written, and the next write tries again.
   */
  writeRecord(stop: RunStop | undefined): { summary: Summary; path: string; error?: RecordWriteError } {
    return this.#recorder.writeRecord(stop);
  }

  /**
   * Ends the run at once, synchronously (a second Ctrl-C, a process about to
   * exit): kills every worker here, discards the worktrees, records each task
   * that has no result as cancelled, and writes the record.
   */
  kill(stop: RunStop): ReturnType<SwarmRun["writeRecord"]> {
    this.#engine.kill();
    this.#recorder.finish();
    for (const [task, outcome] of this.#worktrees.discardSync()) this.#recorder.worktreeOpened(task, outcome);
    this.#recorder.settleUnended((task) => unrunResult(task, "cancelled", { code: INTERRUPTED, message: "killed by a second signal" }));
    return this.writeRecord(stop);
  }

  /** Ends a run whose events were never iterated (e.g. the dashboard could not open). */
  async close(): Promise<void> {
    this.#recorder.finish();
    await this.#engine.close();
  }
}

/** The worktrees a killed attempt left at work: its record names them on the rows it left running. */
function leftWorktrees(previous: Summary): LeftWorktree[] {
  return previous.tasks.flatMap((row) =>
    (row.status === "running" || row.status === "pending") &&
    typeof row.worktree === "string" &&
    typeof row.branch === "string" &&
    row.base !== undefined
      ? [{ task: row.name, branch: row.branch, path: row.worktree, base: row.base }]
      : [],
  );
}
