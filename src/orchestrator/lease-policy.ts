// The lease policy: how a task's attempt gets its process (reused, staggered behind its cache group, capped by a budget), and how its turn sizes auto concurrency.
import type { TurnResult, WorkerOptions } from "../worker/index.ts";
import type { Budget } from "./budget.ts";
import { type CacheStagger, joinPrefixGroup, type StaggerTicket } from "./cache-stagger.ts";
import { tasksPerProcess } from "./compose.ts";
import type { AutoConcurrency, Scheduler } from "./scheduler/index.ts";
import type { TaskRecord } from "./task-record.ts";
import type { ReuseOption } from "./types.ts";
import type { WorkerPlan } from "./worker-factory.ts";
import type { Lease, WorkerPool } from "./worker-pool.ts";

export interface LeasePolicyOptions {
  /** The orchestrator's `reuse` (an agent's own wins); undefined: reuse only under auto concurrency. */
  reuse: ReuseOption | undefined;
  /** Undefined when turned off: every worker sends its first prompt at once. */
  stagger: CacheStagger | undefined;
  /** With `concurrency: "auto"`: what sizes the scheduler's limit as turns end. */
  autoConcurrency: AutoConcurrency | undefined;
  pool: Pick<WorkerPool<TaskRecord>, "lease">;
  scheduler: Pick<Scheduler, "running" | "waiting" | "resize">;
  /** The dollar limit a process under these budgets is started with (see Budgets.processLimitUsd); undefined: none. */
  processLimitUsd(budgets: readonly Budget[]): number | undefined;
}

/** How one attempt of a task gets its process. */
export interface AttemptLease {
  /** The attempt's place in its prompt-prefix group: its prompt waits for `ready`; undefined without the stagger. */
  ticket: StaggerTicket | undefined;
  /** The process streams partial messages for the stagger's sake only: the task does not see them. */
  hidePartial: boolean;
  /** A process for the attempt from the pool; `fresh` asks for a new one. */
  acquire(stop: AbortSignal, fresh: boolean): Promise<Lease>;
}

/**
 * Auto sizing keeps finished workers for the next task of the same settings,
 * unless told not to. A task that continues a session (a loop's round) needs
 * a process started on it: a reused one is reset to a new session. Under an
 * agent's or a task's budget, the CLI stops the turn itself once its share of
 * what is left is spent (between model calls): a process of its own, told its
 * share now (Budget.shareUsd), and not kept for other work.
 */
export class LeasePolicy {
  readonly #options: LeasePolicyOptions;

  constructor(options: LeasePolicyOptions) {
    this.#options = options;
  }

  /** The lease of one attempt of the task, whose worker `plan` describes. */
  lease(record: TaskRecord, plan: WorkerPlan<TaskRecord>): AttemptLease {
    const { pool, stagger, autoConcurrency } = this.#options;
    const reuse = this.#options.reuse ?? (autoConcurrency !== undefined || undefined);
    const maxTasks = record.overrides.resume === undefined ? tasksPerProcess(record.agent, reuse) : 1;
    const { ticket, hidePartial, leasePlan } = joinPrefixGroup(stagger, plan);
    const limitUsd = this.#options.processLimitUsd(record.budgets);
    if (limitUsd === undefined) return { ticket, hidePartial, acquire: (signal, fresh) => pool.lease(leasePlan, { maxTasks, signal, fresh }) };
    const capped: WorkerPlan<TaskRecord> = {
      ...leasePlan,
      start: (stop: AbortSignal | undefined, extra?: Partial<WorkerOptions>) => leasePlan.start(stop, { ...extra, maxBudgetUsd: limitUsd }),
    };
    return { ticket, hidePartial, acquire: (signal) => pool.lease(capped, { maxTasks: 1, signal, fresh: true }) };
  }

  /** A turn that succeeded, still in its slot: under auto concurrency, the scheduler's limit is sized by its timings. */
  succeeded(turn: TurnResult): void {
    const { autoConcurrency, scheduler } = this.#options;
    if (autoConcurrency === undefined) return;
    const apiMs = turn.result.duration_api_ms;
    const { running, waiting } = scheduler;
    // Tasks past the admission window are not counted: the estimate then errs to fewer processes.
    scheduler.resize(autoConcurrency.observe(turn.durationMs, typeof apiMs === "number" ? apiMs : undefined, running, running - 1 + waiting));
  }
}
