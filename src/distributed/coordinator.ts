// The coordinator of a distributed run: a TaskRunner whose tasks run on the hosts serving the run's BullMQ queue.
import { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { AbortError, CadreError } from "../errors.ts";
import {
  emptyUsage,
  errorSummary,
  InvalidTaskError,
  type OrchestratorEvent,
  resultWithoutTurn,
  Scheduler,
  type SessionRecord,
  type TaskBoard,
  type TaskInfo,
  type TaskResult,
  type TaskRunner,
  type TaskSpec,
  type TaskStatus,
  TranscriptDirectory,
  type Usage,
} from "../orchestrator/index.ts";
import type { RehearsalScripts } from "../rehearsal/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { RedisUnreachableError } from "./errors.ts";
import { EventReader } from "./event-stream.ts";
import { FleetLimit } from "./fleet-limit.ts";
import { CONTROL_CHANNEL, jobIdFor, PREFIX, RUNS_KEY, type RunKeys, runKeys } from "./keys.ts";
import { readTotals } from "./ledger.ts";
import { type Ended, type JobEnd, type Outcome, Recovery, UNBOUND_LIMITER, type Waiting } from "./recovery.ts";
import { connectRedis, DEFAULT_REDIS_LOSS_MS, deleteMatching, evictionWarning, watchLoss } from "./redis.ts";
import { readResults } from "./results.ts";
import { HostSteering } from "./steering.ts";
import { serveTaskBoard } from "./task-board.ts";
import { redactUrl } from "./url.ts";
import {
  type ControlMessage,
  type DistributedRun,
  DistributedRunSchema,
  type JobResult,
  readJobResult,
  readJson,
  type SharedOrchestratorOptions,
} from "./wire.ts";

export interface CoordinatorOptions {
  redisUrl: string;
  /** A new id starts a run; the id of a run whose coordinator stopped picks it up where it was. */
  runId: string;
  swarm: string;
  /** Tasks running at once over all hosts. */
  concurrency: number;
  options: SharedOrchestratorOptions;
  /** Under --rehearse: the scripts each host's scripted model plays. */
  rehearsal?: RehearsalScripts;
  /** Write one JSONL transcript per task here, from the events the hosts send. */
  transcriptsDir?: string;
  /** Redis down this long mid-run fails the tasks still running. Default 30 s. */
  redisLossMs?: number;
  /**
   * Tasks whose earlier attempt's result the run already has (in its record):
   * their jobs in Redis are stale, so they run as new jobs of this attempt. The
   * jobs of other tasks are collected: a host may have finished them while no coordinator listened.
   */
  rerun?: { attempt: number; tasks: ReadonlySet<string> };
  /** What the run should tell its user as it happens, one line each (Redis lost the run's state, evicts keys). */
  notify?: (line: string) => void;
  /** The trace context a task's job carries (a W3C `traceparent`), when the run is traced: its host's spans join the run's trace. */
  traceContext?: (task: TaskInfo) => string | undefined;
  /** The run's tasks, for the hosts' workers that may post: the coordinator answers their requests with it. */
  taskBoard?: TaskBoard;
}

/** How long hosts can learn that the run ended after its keys are gone. */
const ENDED_TTL_S = 3_600;

const UNNAMED = "a distributed task needs a name: it makes the task's job id";
/** BullMQ: 1 is the highest priority and 2^21 the lowest; cadre: higher first, 0 by default. */
const PRIORITY_ZERO = 1 << 20;
/**
 * Completed jobs a run's queue keeps in Redis (BullMQ removes older ones as
 * new ones complete): their results are recorded here once read, and a
 * coordinator started again with the run's id finds the tasks these hold
 * finished; the rest of a larger run's tasks run again then.
 */
const COMPLETED_JOBS_KEPT = 10_000;

function bullPriority(priority: number | undefined): number {
  return Math.min(2 ** 21, Math.max(1, PRIORITY_ZERO - (priority ?? 0)));
}

/**
 * The coordinator of a distributed run: a TaskRunner whose tasks run on the
 * hosts (`cadre worker`) that serve the run's BullMQ queue. It enqueues each
 * task (the swarm runner calls run() as dependencies finish), relays the
 * hosts' orchestrator events, writes the transcripts here, and resolves each
 * task with the result its host returned. The run's limits live in Redis:
 * the queue's global concurrency, the budget ledger, the fleet's rate limit.
 */
export class Coordinator implements TaskRunner {
  readonly #keys: RunKeys;
  readonly #hub = new EventHub<OrchestratorEvent>();
  readonly #hosts = new Map<string, string>();
  /** By host and record id: the latest report of each session. */
  readonly #sessions = new Map<string, SessionRecord>();
  /** How many times this coordinator was asked to run each task. */
  readonly #runsOf = new Map<string, number>();
  /** Resolves when the run cannot go on with Redis (lost too long, or its events unreadable). */
  readonly #failed: Promise<CadreError>;
  #fail!: (error: CadreError) => void;
  readonly #agentGate: Scheduler | undefined;
  readonly #transcripts: TranscriptDirectory | undefined;
  /** One abort listener per signal (the whole run shares one), however many tasks wait on it. */
  readonly #onAbort = new WeakMap<AbortSignal, Set<() => void>>();
  #reader!: EventReader;
  #fleet!: FleetLimit;
  #totals: { costUsd: number; usage: Usage } = { costUsd: 0, usage: emptyUsage() };
  #failure: CadreError | undefined;
  #stopWatching: () => void = () => {};
  readonly #waiting = new Map<string, Waiting>();
  /** Jobs a host started, as its events said. */
  readonly #started = new Set<string>();
  readonly #notify: (line: string) => void;
  readonly #rerun: CoordinatorOptions["rerun"];
  #record!: DistributedRun;
  #recovery!: Recovery;
  readonly #traceContext: CoordinatorOptions["traceContext"];
  /** Stops answering the hosts' task board requests. */
  readonly #boardServed = new AbortController();
  /** Where each running task runs, and a message, interrupt or stop for it sent there. */
  readonly #steering: HostSteering;

  readonly #redis: Redis;
  readonly #queue: Queue;
  readonly #queueEvents: QueueEvents;

  private constructor(
    readonly runId: string,
    /** True when the run was already in Redis: this coordinator picks it up. */
    readonly resumed: boolean,
    redis: Redis,
    queue: Queue,
    queueEvents: QueueEvents,
    options: CoordinatorOptions,
  ) {
    this.#redis = redis;
    this.#queue = queue;
    this.#queueEvents = queueEvents;

    this.#keys = runKeys(runId);
    this.#steering = new HostSteering(redis, this.#keys, runId, { redisUrl: options.redisUrl });
    this.#failed = new Promise((resolve) => {
      this.#fail = (error) => {
        this.#failure ??= error;
        resolve(this.#failure);
      };
    });
    this.#transcripts = options.transcriptsDir ? new TranscriptDirectory(options.transcriptsDir) : undefined;
    this.#notify = options.notify ?? (() => {});
    this.#rerun = options.rerun;
    this.#traceContext = options.traceContext;
    const limits = options.options.agentLimits;
    // Per-agent limits hold by admission: a task enters the queue only while its agent is below its limit.
    this.#agentGate =
      limits && Object.keys(limits).length > 0 ? new Scheduler({ concurrency: Number.MAX_SAFE_INTEGER, keyLimits: limits }) : undefined;
  }

  /** Connects, registers the run (or finds it, to resume it) and tells the hosts. Throws RedisUnreachableError at once when Redis is not there. */
  static async start(options: CoordinatorOptions): Promise<Coordinator> {
    const redis = await connectRedis(options.redisUrl, `cadre-run-${options.runId}`);
    const keys = runKeys(options.runId);
    const queue = new Queue(keys.queue, { connection: redis, prefix: PREFIX });
    const queueEvents = new QueueEvents(keys.queue, { connection: redis, prefix: PREFIX });
    // Connection errors are the watchdog's to report (once, and only when they last).
    queue.on("error", () => {});
    queueEvents.on("error", () => {});
    try {
      const warning = await evictionWarning(redis, options.redisUrl);
      if (warning) options.notify?.(`warning: ${warning}`);
      const record: DistributedRun = {
        version: 1,
        swarm: options.swarm,
        concurrency: options.concurrency,
        options: options.options,
        rehearsal: options.rehearsal ?? null,
        createdAt: Date.now(),
      };
      const created = await redis.set(keys.record, JSON.stringify(record), "NX");
      const stored = created ? record : readJson(DistributedRunSchema, (await redis.get(keys.record)) ?? "", `run ${options.runId}`);
      await queue.setGlobalConcurrency(stored.concurrency);
      await queue.setGlobalRateLimit(UNBOUND_LIMITER.max, UNBOUND_LIMITER.durationMs);
      await queueEvents.waitUntilReady();
      const coordinator = new Coordinator(options.runId, created !== "OK", redis, queue, queueEvents, options);
      coordinator.#record = stored;
      coordinator.#listen(options, stored.concurrency);
      // A run id used again after its run ended: hosts serve it anew.
      await redis.del(keys.ended);
      await redis.sadd(RUNS_KEY, options.runId);
      await coordinator.#poke({ type: "runs" });
      return coordinator;
    } catch (error) {
      await Promise.all([queueEvents.close(), queue.close()]).catch(() => undefined);
      redis.disconnect();
      throw error;
    }
  }

  on(listener: (event: OrchestratorEvent) => void): () => void {
    return this.#hub.on(listener);
  }

  /** Cost and token usage of the run on every host, peer and supervisor sessions included, as of the last finished task. */
  get totals(): { costUsd: number; usage: Usage } {
    return this.#totals;
  }

  get transcriptPaths(): ReadonlyMap<string, string> {
    return this.#transcripts?.paths ?? new Map();
  }

  /** The peers, supervisors and children of the hosts' workers, as the hosts last reported them. */
  get sessionRecords(): SessionRecord[] {
    return [...this.#sessions.values()];
  }

  /** Task id → the host that ran it (its last attempt); session record id → the host it worked on. */
  get hosts(): ReadonlyMap<string, string> {
    return this.#hosts;
  }

  /**
   * Reaches one running task on the host that runs it, as Orchestrator.sendToTask, interruptTask and stopTask do
   * in one process: each resolves once that host has done it (TaskNotRunningError when the task is not running there).
   */
  get steering(): HostSteering {
    return this.#steering;
  }

  /** Set once the run cannot go on with Redis (lost for too long): running tasks then end as failed with it. */
  get failure(): CadreError | undefined {
    return this.#failure;
  }

  /** Runs one task on some host; resolves with its result whatever the outcome. */
  async run(spec: TaskSpec): Promise<TaskResult> {
    if (spec.name === undefined) throw new InvalidTaskError(UNNAMED);
    // A task's first job keeps its name's id, which a restarted coordinator finds again; a task run
    // again by this coordinator (its session was not where it ran) is a job of its own.
    const run = (this.#runsOf.get(spec.name) ?? 0) + 1;
    this.#runsOf.set(spec.name, run);
    const attempt = this.#rerun?.tasks.has(spec.name) ? this.#rerun.attempt : undefined;
    const task: TaskInfo = { id: jobIdFor(spec.name, run, attempt), name: spec.name, agent: spec.agent, parentId: undefined };
    const queued = Date.now();
    this.#hub.emit({ type: "task_queued", task });
    if (!this.#agentGate) return this.#runJob(task, spec, queued);
    try {
      return await this.#agentGate.schedule(() => this.#runJob(task, spec, queued), {
        key: spec.agent,
        priority: spec.priority,
        signal: spec.signal,
      });
    } catch (error) {
      if (!(error instanceof AbortError)) throw error;
      return this.#settle(
        task,
        resultWithoutTurn(task, "cancelled", { code: error.code, message: error.message }, { queuedMs: Date.now() - queued }),
      );
    }
  }

  /**
   * The run is over: hosts stop serving it and its data leaves Redis; the
   * transcripts are flushed. After a loss of Redis only the connections close
   * (a coordinator started later with the same run id picks the run up).
   */
  async close(): Promise<void> {
    this.#boardServed.abort();
    this.#steering.clear();
    this.#recovery.stop();
    this.#stopWatching();
    this.#fleet.stop();
    this.#agentGate?.clear();
    await this.#reader.stop();
    if (this.#failure === undefined) {
      this.#totals = await readTotals(this.#redis, this.#keys);
      // The data goes before the hosts hear the run ended: a host that stops serving an ended run removes what its
      // queue's worker wrote meanwhile, and must not do so under the obliteration (which needs the queue's meta).
      await this.#queue.obliterate({ force: true });
      await deleteMatching(this.#redis, `${this.#keys.base}:*`);
      // Said before the run leaves the set: a host that finds a run gone serves it on unless it ended.
      await this.#redis.set(this.#keys.ended, "1", "EX", ENDED_TTL_S);
      await this.#redis.srem(RUNS_KEY, this.runId);
      await this.#poke({ type: "runs" });
      // Nothing more will come of a job still waited on.
      for (const waiting of this.#waiting.values()) void waiting.finished?.({ error: "the run's queue closed" });
      await this.#queueEvents.close();
      await this.#queue.close();
    } else {
      // Nothing more can be said to Redis: drop the connections, without waiting on replies that will not come.
      void Promise.all([this.#queueEvents.disconnect(), this.#queue.disconnect()]).catch(() => undefined);
    }
    this.#redis.disconnect();
    await this.#transcripts?.close();
  }

  #listen(options: CoordinatorOptions, concurrency: number): void {
    // One listener for every job rather than two of each job's own (BullMQ's waitUntilFinished): a run of thousands waits on a map.
    this.#queueEvents.on("completed", ({ jobId, returnvalue }) => void this.#waiting.get(jobId)?.finished?.({ value: returnvalue }));
    this.#queueEvents.on("failed", ({ jobId, failedReason }) => void this.#waiting.get(jobId)?.finished?.({ error: failedReason }));
    this.#fleet = new FleetLimit(concurrency, this.#queue, (state) => this.#hub.emit({ type: "rate_limit", state }));
    const blocking = this.#redis.duplicate();
    blocking.on("error", () => {
      // Reported by the watchdog on the main connection.
    });
    this.#reader = new EventReader(
      blocking,
      this.#keys.events,
      (event, host) => this.#relay(event, host),
      (error) =>
        this.#fail(error instanceof CadreError ? error : new RedisUnreachableError(redactUrl(options.redisUrl), String(error), { cause: error })),
    );
    this.#stopWatching = watchLoss(this.#redis, options.redisUrl, options.redisLossMs ?? DEFAULT_REDIS_LOSS_MS, (error) => this.#fail(error));
    if (options.taskBoard) void serveTaskBoard(this.#redis, this.#keys, options.taskBoard, this.#boardServed.signal);
    this.#recovery = new Recovery({
      redis: this.#redis,
      queue: this.#queue,
      keys: this.#keys,
      runId: this.runId,
      record: this.#record,
      waiting: this.#waiting,
      notify: this.#notify,
      totals: () => this.#totals,
      failed: () => this.#failure !== undefined,
      started: (jobId) => this.#started.has(jobId),
      cancel: (jobId) => this.#cancel(jobId),
    });
  }

  /**
   * A host's event, as if this process's orchestrator had sent it; a pid means
   * nothing off its host. A host's rate-limit state is its own: it feeds the
   * fleet's, which is what the run shows. Its tasks' starts and ends say where each can be steered.
   */
  #relay(event: OrchestratorEvent, host: string): void {
    this.#steering.observe(event, host);
    if (event.type === "rate_limit") {
      if (event.state.backoffUntil !== null) this.#fleet.rateLimited(event.state.backoffUntil);
      return;
    }
    // A task's end is the coordinator's to announce, once, with the result that counts (a late attempt's does not).
    if (event.type === "task_finished" && event.task.parentId === undefined) return;
    if (event.type === "task_started" && event.task.parentId === undefined) this.#started.add(event.task.id);
    if (event.type === "task_finished" && event.result.status === "succeeded") this.#fleet.succeeded();
    const local = event.type === "task_started" ? { ...event, pid: undefined } : event;
    if (local.type === "task_message") this.#transcripts?.write(local.task.id, local.task.name, local.message);
    this.#hub.emit(local);
  }

  async #runJob(task: TaskInfo, spec: TaskSpec, queued: number): Promise<TaskResult> {
    const ended = (status: TaskStatus, error: { code: string; message: string }, attempts = 0) =>
      this.#settle(task, resultWithoutTurn(task, status, error, { attempts, queuedMs: Date.now() - queued }));
    // Commands wait while Redis reconnects: each wait also ends when the run gives up on Redis.
    const failed = this.#failed.then((error): Ended => ({ ended: () => ended("failed", { code: error.code, message: error.message }) }));
    const { signal, worker, prepareWorker, ...data } = spec;
    // A task's own directory (its worktree) is made here, where the run's checkout is: a function does not travel to a host.
    let prepared = worker;
    try {
      if (prepareWorker) prepared = { ...worker, ...(await prepareWorker(signal ?? new AbortController().signal)) };
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      return ended("failed", { code: code ?? "PREPARE_FAILED", message: message ?? String(error) });
    }
    // Whichever comes first: the host's result, the job gone before a host took it, BullMQ giving up, Redis lost.
    let settle!: (outcome: Outcome) => void;
    const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
    const traceContext = this.#traceContext?.(task);
    const waiting: Waiting = {
      name: task.name,
      data: { spec: { ...data, worker: prepared }, ...(traceContext !== undefined && { traceContext }) },
      opts: { jobId: task.id, priority: bullPriority(spec.priority), removeOnComplete: { count: COMPLETED_JOBS_KEPT } },
      settle,
    };
    this.#waiting.set(task.id, waiting);
    try {
      // The Job object is not kept: what ends the wait is the queue's events, dispatched by job id (see #listen).
      const added = await Promise.race([this.#queue.add(waiting.name, waiting.data, waiting.opts).then(() => ({})), failed]);
      if ("ended" in added) return added.ended();
      const unwatch = signal
        ? this.#whenAborted(signal, () => {
            // With Redis lost the cancel cannot be said; the run's failure settles the task.
            void this.#cancel(task.id).then(
              (removed) => removed && settle({ ended: () => ended("cancelled", { code: "ABORTED", message: "cancelled before a host took it" }) }),
              () => undefined,
            );
          })
        : () => {};
      waiting.finished = async (end) => {
        if ("value" in end) {
          try {
            // The recorded result is the one that counts; an older host only returns it.
            const recorded = (await readResults(this.#redis, this.#keys, [task.id])).get(task.id);
            settle({ job: recorded ?? readJobResult(end.value) });
          } catch (error) {
            settle({ ended: () => ended("failed", errorSummary(error)) });
          }
          return;
        }
        // BullMQ failed the job: it stalled too often (its hosts died), or no host could run it at all; or Redis lost it.
        const recorded = (await readResults(this.#redis, this.#keys, [task.id]).catch(() => undefined))?.get(task.id);
        if (recorded) return settle({ job: recorded });
        const job = await this.#queue.getJob(task.id).catch(() => undefined);
        // Redis forgot the run: the recovery makes the job again, and its result is taken from the results.
        if (job === undefined && (await this.#redis.exists(this.#keys.record).catch(() => 0)) === 0) return;
        const attempts = job?.attemptsStarted ?? 0;
        settle({ ended: () => ended("failed", { code: "TASK_LOST", message: `no host could finish the task: ${end.error}` }, attempts) });
      };
      // A coordinator that picks a run up may find the job ended before it came: no event will tell.
      if (this.resumed) void this.#endedBefore(task.id).then((end) => end && waiting.finished?.(end));
      const settled = await Promise.race([outcome, failed]);
      unwatch();
      // Every event the host sent before it returned, in order, comes before the result.
      const caughtUp = async () => {
        await this.#reader.caughtUp(this.#redis);
        this.#totals = await readTotals(this.#redis, this.#keys);
      };
      const reading = caughtUp();
      // Once the run has given up on Redis, the reading fails when the connection closes: nobody waits for it then.
      reading.catch(() => undefined);
      await Promise.race([reading, this.#failed]);
      return "job" in settled ? this.#accept(task, settled.job) : settled.ended();
    } finally {
      this.#waiting.delete(task.id);
    }
  }

  /** A host's result: who ran the task and its sessions are noted, and its end announced. */
  #accept(task: TaskInfo, { host, result, sessions }: JobResult): TaskResult {
    this.#hosts.set(task.id, host);
    // Each host reports all its sessions so far: the latest report of a session is the whole of it.
    for (const session of sessions) {
      this.#sessions.set(`${host}/${session.id}`, session);
      this.#hosts.set(session.id, host);
    }
    if (result.status === "succeeded") this.#fleet.succeeded();
    return this.#settle(task, result);
  }

  /** Calls `listener` when `signal` aborts (at once if it has); returns the function that stops that. */
  #whenAborted(signal: AbortSignal, listener: () => void): () => void {
    if (signal.aborted) {
      listener();
      return () => {};
    }
    let listeners = this.#onAbort.get(signal);
    if (!listeners) {
      const all = new Set<() => void>();
      signal.addEventListener(
        "abort",
        () => {
          for (const call of all) call();
        },
        { once: true },
      );
      this.#onAbort.set(signal, all);
      listeners = all;
    }
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  /** How a job ended before this coordinator waited for it, or undefined while it has not. */
  async #endedBefore(jobId: string): Promise<JobEnd | undefined> {
    const state = await this.#queue.getJobState(jobId).catch(() => "unknown");
    if (state !== "completed" && state !== "failed") return undefined;
    const job = await this.#queue.getJob(jobId).catch(() => undefined);
    if (job === undefined) return undefined;
    return state === "completed" ? { value: job.returnvalue } : { error: job.failedReason };
  }

  /** Announces a task's end: once, with the result that counts. */
  #settle(task: TaskInfo, result: TaskResult): TaskResult {
    this.#steering.ended(task.id);
    // Its host's events came before its result: its transcript is whole, and its file closes (a later line would reopen it).
    this.#transcripts?.end(task.id);
    this.#hub.emit({ type: "task_finished", task, result });
    return result;
  }

  /** Marks the job cancelled (a host checks before it starts it) and tells its host; true when it was still waiting and is gone. */
  async #cancel(jobId: string): Promise<boolean> {
    await this.#redis.sadd(this.#keys.cancelled, jobId);
    await this.#poke({ type: "cancel", run: this.runId, job: jobId });
    return (await this.#queue.remove(jobId)) === 1;
  }

  async #poke(message: ControlMessage): Promise<void> {
    await this.#redis.publish(CONTROL_CHANNEL, JSON.stringify(message));
  }
}
