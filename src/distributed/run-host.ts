// One run served by one host: a local orchestrator configured as the coordinator says, fed by the run's BullMQ queue.
import { type Job, Worker as QueueWorker, WaitingError } from "bullmq";
import type { Redis } from "ioredis";
import { AbortError } from "../errors.ts";
import { budgetLabel, Orchestrator, type OrchestratorEvent, type TaskResult } from "../orchestrator/index.ts";
import { type RehearsalRig, startRehearsalRig } from "../rehearsal/index.ts";
import { own } from "../util/own.ts";
import { EventWriter } from "./event-stream.ts";
import { RedisInbox } from "./inbox.ts";
import { PREFIX, type RunKeys, runKeys } from "./keys.ts";
import { RedisLedger } from "./ledger.ts";
import { readResults, recordResult } from "./results.ts";
import { answerSteering, markSteerable } from "./steering.ts";
import { RedisTaskBoard } from "./task-board.ts";
import { type DistributedRun, type JobResult, readJobData } from "./wire.ts";

/** How often one task may lose its host (the host died) before BullMQ gives up on it. */
export const MAX_HOST_LOSSES = 2;

export interface HostContext {
  redis: Redis;
  /** The host's name: BullMQ's worker name, and `host` in the run's summary. */
  name: string;
  /** Tasks this host runs at once. */
  concurrency: number;
  /** A host that cannot renew its locks for this long loses its tasks to other hosts. */
  stallMs: number;
  log(line: string): void;
  /** Sees every run's events and jobs here (the host's telemetry); nothing of it reaches Redis. */
  observer?: HostObserver;
}

/** What a host tells an observer: each job as it starts (with the trace context it carries) and every event of its runs. */
export interface HostObserver {
  job(runId: string, taskId: string, traceContext: string | undefined): void;
  event(runId: string, event: OrchestratorEvent): void;
}

/**
 * One run, served by one host: a local orchestrator configured as the run's
 * coordinator says (agents, hooks, peers), whose budget and inboxes are in
 * Redis, fed by a BullMQ worker on the run's queue. Its events go to the
 * run's stream, for the coordinator.
 */
export class RunHost {
  readonly #keys: RunKeys;
  readonly #ledger: RedisLedger;
  /** The ledgers of the agents' and tasks' budgets, by label, opened as the orchestrator asks for them. */
  readonly #scopedLedgers = new Map<string, RedisLedger>();
  readonly #events: EventWriter;
  /** Aborted to give the running tasks back to the queue (the host's second signal). */
  readonly #handBack = new AbortController();
  readonly #running = new Map<string, AbortController>();
  #orchestrator!: Orchestrator;
  #worker!: QueueWorker;
  #rig: RehearsalRig | undefined;
  /** A look for steering requests under way (and whether another was asked for meanwhile); a placeholder until start(). */
  #steering: { again: boolean } | undefined = { again: false };

  readonly #host: HostContext;
  readonly #record: DistributedRun;

  constructor(
    host: HostContext,
    readonly runId: string,
    record: DistributedRun,
  ) {
    this.#host = host;
    this.#record = record;

    this.#keys = runKeys(runId);
    this.#ledger = new RedisLedger(host.redis, runId, this.#keys, record.options.budgetUsd);
    this.#events = new EventWriter(host.redis, this.#keys.events, host.name);
  }

  async start(): Promise<void> {
    this.#rig = this.#record.rehearsal ? await startRehearsalRig(this.#record.rehearsal) : undefined;
    this.#orchestrator = new Orchestrator({
      ...this.#record.options,
      concurrency: this.#host.concurrency,
      runId: this.runId,
      ledger: this.#ledger,
      // An agent's budget is one over all hosts: its spending is counted in Redis, as the run's is.
      scopedLedger: (scope) => {
        const label = budgetLabel(scope);
        const limit = scope.kind === "agent" ? own(this.#record.options.agents, scope.name)?.budgetUsd : undefined;
        const ledger = new RedisLedger(this.#host.redis, this.runId, { spent: this.#keys.budgetSpent(label) }, limit);
        this.#scopedLedgers.set(label, ledger);
        return ledger;
      },
      inbox: new RedisInbox(this.#host.redis, this.#keys),
      // Only the workers of tasks that may post get its tools; the coordinator answers their posts.
      taskBoard: new RedisTaskBoard(this.#host.redis, this.#keys),
      ...(this.#rig && { workerOptions: this.#rig.workerOptions, processOptions: this.#rig.processOptions }),
    });
    // Every event goes to the coordinator; a rate limit met here holds back the fleet from there (FleetLimit).
    this.#orchestrator.on((event) => {
      this.#events.push(event);
      this.#host.observer?.event(this.runId, event);
    });
    this.#worker = new QueueWorker(this.#keys.queue, (job, token) => this.#process(job, token), {
      connection: this.#host.redis,
      prefix: PREFIX,
      name: this.#host.name,
      concurrency: this.#host.concurrency,
      lockDuration: this.#host.stallMs,
      stalledInterval: Math.max(500, Math.round(this.#host.stallMs / 2)),
      maxStalledCount: MAX_HOST_LOSSES,
    });
    this.#worker.on("error", (error) => {
      // A connection down is the watchdog's to report, once and only when it lasts; a job Redis forgot has its result recorded already.
      if (this.#host.redis.status !== "ready" || error.message.startsWith("Missing key for job")) return;
      this.#host.log(`run ${this.runId}: queue error: ${error.message}`);
    });
    this.#host.log(`run ${this.runId} (swarm "${this.#record.swarm}"): serving`);
    // Requests that came while the run was being set up: none can be for a task here, but each gets its answer.
    const asked = this.#steering?.again;
    this.#steering = undefined;
    if (asked) this.steer();
  }

  /**
   * Takes the messages, interrupts and stops waiting for this host's tasks of the run, and applies each
   * (see answerSteering); one look at a time, and one more if asked again meanwhile.
   */
  steer(): void {
    if (this.#steering !== undefined) {
      this.#steering.again = true;
      return;
    }
    const look = { again: false };
    this.#steering = look;
    void (async () => {
      do {
        look.again = false;
        await answerSteering(this.#host.redis, this.#keys, this.#host.name, this.#orchestrator, (line) =>
          this.#host.log(`run ${this.runId}: ${line}`),
        );
      } while (look.again);
    })()
      .catch((error: unknown) => {
        // A connection down is the watchdog's to report; the next look finds what is still waiting.
        if (this.#host.redis.status === "ready")
          this.#host.log(`run ${this.runId}: could not read its steering requests: ${(error as Error).message}`);
      })
      .finally(() => {
        if (this.#steering === look) this.#steering = undefined;
      });
  }

  /** The coordinator cancelled a job: stop it if it runs here. */
  cancel(jobId: string): void {
    this.#running.get(jobId)?.abort(new AbortError("the task (cancelled by the coordinator)"));
  }

  /** Another host reached a budget: learn it now, so the work here under it stops too. */
  async budgetReached(): Promise<void> {
    await this.#syncLedgers();
  }

  async #syncLedgers(): Promise<void> {
    await Promise.all([this.#ledger.sync(), ...[...this.#scopedLedgers.values()].map((ledger) => ledger.sync())]);
  }

  async #flushLedgers(): Promise<void> {
    await Promise.all([this.#ledger.flush(), ...[...this.#scopedLedgers.values()].map((ledger) => ledger.flush())]);
  }

  /** Takes no more tasks; finishes those it runs (or, with `handBack`, stops them and puts them back in the queue). */
  async stop(handBack = false): Promise<void> {
    if (handBack) this.#handBack.abort(new AbortError("the task (its host is stopping)"));
    await this.#worker.close();
    await this.#orchestrator.close();
    await this.#events.flush();
    await this.#flushLedgers();
    await this.#rig?.close();
  }

  /** Redis is gone: ends every worker process here and lets go; the tasks' locks run out and other hosts take them up. */
  async abandon(): Promise<void> {
    await this.#orchestrator.close();
    await Promise.all([this.#worker.close(true).catch(() => undefined), this.#rig?.close()]);
  }

  async #process(job: Job, token: string | undefined): Promise<JobResult> {
    const { spec, traceContext } = readJobData(job.data);
    const id = job.id ?? spec.name ?? "";
    // The task's wait for a slot of the whole fleet: since its coordinator queued it (once, even when it restarted).
    const waitedMs = Math.max(0, Date.now() - job.timestamp);
    this.#host.observer?.job(this.runId, id, traceContext);
    // A start lost with its host counts as an attempt, and uses up a retry.
    const earlier = job.attemptsStarted - 1;
    const cancel = new AbortController();
    this.#running.set(id, cancel);
    try {
      if (await this.#host.redis.sismember(this.#keys.cancelled, id)) cancel.abort(new AbortError("the task (cancelled by the coordinator)"));
      await markSteerable(this.#host.redis, this.#keys, this.#host.name);
      // A job made again after Redis forgot the run may have its result already, from the attempt that was under way.
      const earlierResult = (await readResults(this.#host.redis, this.#keys, [id])).get(id);
      if (earlierResult) {
        this.#host.log(`run ${this.runId}: ${spec.name} already has a result (from ${earlierResult.host}); not run again`);
        return earlierResult;
      }
      // The shared budgets, checked before each start: another host may have spent them.
      await this.#syncLedgers();
      this.#host.log(`run ${this.runId}: ${spec.name} starts${earlier > 0 ? ` (attempt ${earlier + 1})` : ""}`);
      const result = await this.#orchestrator.run({
        ...spec,
        id,
        ...(spec.retries !== undefined && { retries: Math.max(0, spec.retries - earlier) }),
        signal: AbortSignal.any([cancel.signal, this.#handBack.signal]),
      });
      await Promise.all([this.#events.flush(), this.#flushLedgers()]);
      if (this.#handBack.signal.aborted && !cancel.signal.aborted && result.status === "cancelled") {
        this.#host.log(`run ${this.runId}: ${spec.name} goes back to the queue`);
        await job.moveToWait(token);
        throw new WaitingError();
      }
      const done: JobResult = {
        host: this.#host.name,
        result: { ...withEarlierAttempts(result, earlier), queuedMs: waitedMs + result.queuedMs },
        sessions: this.#orchestrator.sessionRecords,
      };
      const recorded = await recordResult(this.#host.redis, this.#keys, id, token ?? "", done);
      if (recorded === "refused") {
        // BullMQ refuses it too (the lock is not ours): the task's result is the attempt's that holds it.
        this.#host.log(`run ${this.runId}: ${spec.name} ${result.status} too late: its lock passed to another attempt, whose result counts`);
        throw new Error(`${spec.name} finished after its lock passed to another attempt`);
      }
      this.#host.log(`run ${this.runId}: ${spec.name} ${result.status}${recorded === "stands" ? " (an earlier attempt's result stands)" : ""}`);
      return done;
    } finally {
      this.#running.delete(id);
    }
  }
}

function withEarlierAttempts(result: TaskResult, earlier: number): TaskResult {
  return earlier > 0 && result.attempts > 0 ? { ...result, attempts: result.attempts + earlier } : result;
}
