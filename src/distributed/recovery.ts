// When Redis forgets a run (restarted empty, flushed, evicted): the coordinator notices and makes the run again.
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { TaskResult, Usage } from "../orchestrator/index.ts";
import { CONTROL_CHANNEL, RUNS_KEY, type RunKeys } from "./keys.ts";
import { restoreTotals } from "./ledger.ts";
import { readResults } from "./results.ts";
import type { ControlMessage, DistributedRun, JobData, JobResult } from "./wire.ts";

/**
 * BullMQ honours a manual rate limit (queue.rateLimit, which a host sets when
 * it meets a 429 or 529) only on a queue that has a limiter; this one never
 * binds by itself: so many starts per second never happen.
 */
export const UNBOUND_LIMITER = { max: 2 ** 40, durationMs: 1_000 };

/** How often the coordinator checks that Redis still holds the run, and looks for results no job event announced. */
const CHECK_MS = 1_000;
/** How long a task under way on a host when Redis forgot the run has to report its result before it is queued again. */
const RUNNING_GRACE_MS = 30_000;

export type Ended = { ended: () => TaskResult };
/** How a task's job ended: a host's result, or an end the coordinator gives it. */
export type Outcome = { job: JobResult } | Ended;

/** A task whose job is out: what makes it again if Redis loses it, and how to hand its outcome over. */
/** How BullMQ says a job ended: with the value its host returned, or failed for this reason. */
export type JobEnd = { value: unknown } | { error: string };

export interface Waiting {
  name: string;
  data: JobData;
  opts: { jobId: string; priority: number; removeOnComplete: { count: number } };
  settle(outcome: Outcome): void;
  /** Called with each end the queue reports for the job (set once the job is in the queue). */
  finished?: (end: JobEnd) => Promise<void>;
}

export interface RecoveryContext {
  redis: Redis;
  queue: Queue;
  keys: RunKeys;
  runId: string;
  record: DistributedRun;
  /** The coordinator's tasks whose jobs are out, by job id. */
  waiting: ReadonlyMap<string, Waiting>;
  notify(line: string): void;
  /** What the run had spent, as last read. */
  totals(): { costUsd: number; usage: Usage };
  /** True once the run gave up on Redis. */
  failed(): boolean;
  /** True when a host started the job (its events said so). */
  started(jobId: string): boolean;
  /** Cancels a job (see Coordinator). */
  cancel(jobId: string): Promise<unknown>;
}

/**
 * Redis may forget a run (restarted without persistence, flushed, evicted,
 * a failover to a replica that lagged): then its jobs, and the events that
 * would announce their ends, are gone. Each second the coordinator checks:
 * a run whose record is gone is made again, with a job for each task that
 * has no result; a result a host recorded is taken even when no job event
 * announced it.
 */
export class Recovery {
  /** Jobs made again after Redis lost them: the first result of the task counts, and the other attempt is cancelled. */
  readonly #recreated = new Set<string>();
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #graces = new Set<ReturnType<typeof setTimeout>>();
  #checking = false;

  constructor(private readonly run: RecoveryContext) {
    this.#timer = setInterval(() => void this.#check(), CHECK_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const grace of this.#graces) clearTimeout(grace);
  }

  async #check(): Promise<void> {
    const { redis, keys, waiting } = this.run;
    if (this.#checking || this.run.failed() || redis.status !== "ready") return;
    this.#checking = true;
    try {
      if ((await redis.exists(keys.record)) === 0) await this.#recreate();
      const found = await readResults(redis, keys, [...waiting.keys()]);
      for (const [jobId, job] of found) {
        waiting.get(jobId)?.settle({ job });
        // The first result stands: the job made again need not run (on).
        if (this.#recreated.delete(jobId)) void this.run.cancel(jobId).catch(() => undefined);
      }
    } catch {
      // Redis went away meanwhile: the watchdog reports a lasting loss; the next check tries again.
    } finally {
      this.#checking = false;
    }
  }

  /** Makes the run again in a Redis that lost it: its record, limits and totals, and a job for each task that has no result. */
  async #recreate(): Promise<void> {
    const { redis, queue, keys, runId, record, waiting } = this.run;
    const held = await readResults(redis, keys, [...waiting.keys()]);
    const missing = [...waiting.values()].filter((task) => !held.has(task.opts.jobId));
    // A task under way on a host goes on there, and its host records its result: it is queued again only if none comes.
    const running = missing.filter((task) => this.run.started(task.opts.jobId));
    const queued = missing.filter((task) => !running.includes(task));
    const plural = (count: number) => `${count} task${count === 1 ? "" : "s"}`;
    const grace = running.length > 0 ? `, ${plural(running.length)} under way given ${RUNNING_GRACE_MS / 1000} s to report` : "";
    this.run.notify(`Redis lost run ${runId} (restarted empty, flushed or evicted?): made it again; ${plural(queued.length)} queued again${grace}`);
    await redis.set(keys.record, JSON.stringify(record), "NX");
    await queue.setGlobalConcurrency(record.concurrency);
    await queue.setGlobalRateLimit(UNBOUND_LIMITER.max, UNBOUND_LIMITER.durationMs);
    await restoreTotals(redis, keys, this.run.totals());
    for (const task of queued) await this.#queueAgain(task);
    await redis.sadd(RUNS_KEY, runId);
    const poke: ControlMessage = { type: "runs" };
    await redis.publish(CONTROL_CHANNEL, JSON.stringify(poke));
    if (running.length === 0) return;
    const timer = setTimeout(() => {
      this.#graces.delete(timer);
      void (async () => {
        const reported = await readResults(
          redis,
          keys,
          running.map((task) => task.opts.jobId),
        );
        for (const task of running) if (waiting.has(task.opts.jobId) && !reported.has(task.opts.jobId)) await this.#queueAgain(task);
      })().catch(() => undefined);
    }, RUNNING_GRACE_MS);
    this.#graces.add(timer);
  }

  async #queueAgain(task: Waiting): Promise<void> {
    this.#recreated.add(task.opts.jobId);
    await this.run.redis.sadd(this.run.keys.recreated, task.opts.jobId);
    await this.run.queue.add(task.name, task.data, task.opts);
  }
}
