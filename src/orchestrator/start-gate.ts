// The start gate: what a task passes before it starts (access check, budget forecast, plan window), and its time limit from that start.
import { AbortError } from "../errors.ts";
import type { TurnResult } from "../worker/index.ts";
import type { AccessCheck } from "./access-check.ts";
import type { Budgets } from "./budgets.ts";
import { TaskTimeoutError } from "./errors.ts";
import { anyToolRan } from "./failure.ts";
import { type PlanWindow, refusedByPlan } from "./plan-window.ts";
import { QueueClearedError } from "./scheduler/index.ts";
import type { TaskRecord } from "./task-record.ts";
import { startTimeLimit } from "./time-limit.ts";

/**
 * What stops a task: while it waits, what stops waiting work or a user's stop
 * of this task (`waiting`); from its start, its own stop too (`signal`), which
 * follows `waiting` and adds its time limit. The time limit counts from the
 * start: the time a task waited for a slot is not its own.
 */
export class TaskStops {
  readonly #waiting = new AbortController();
  readonly #own = new AbortController();
  readonly #record: Pick<TaskRecord, "startedAt">;
  readonly #timeoutMs: number | undefined;
  readonly #onStart: () => void;
  #release = () => {};
  readonly #unfollow: () => void;

  /**
   * `stopsWaiting`: what stops waiting work, shared by many tasks; the task follows it with a listener (not
   * AbortSignal.any, which costs a task some 2 KB) until it ends. `onStart`: called once, as the task starts.
   */
  constructor(record: Pick<TaskRecord, "startedAt">, stopsWaiting: AbortSignal, timeoutMs: number | undefined, onStart: () => void) {
    this.#record = record;
    this.#timeoutMs = timeoutMs;
    this.#onStart = onStart;
    const follow = () => this.#waiting.abort(stopsWaiting.reason);
    if (stopsWaiting.aborted) follow();
    else stopsWaiting.addEventListener("abort", follow, { once: true });
    this.#unfollow = () => stopsWaiting.removeEventListener("abort", follow);
  }

  /** What stops the task while it waits (for a slot, the start gate, a back-off): the shared stop, or the user's. */
  get waiting(): AbortSignal {
    return this.#waiting.signal;
  }

  /** The task's own stop, once it runs: its time limit, or what stops waiting work. */
  get signal(): AbortSignal {
    return this.#own.signal;
  }

  /** The signal that stopped the task, if one did. */
  get stopped(): AbortSignal | undefined {
    return this.#own.signal.aborted ? this.#own.signal : this.waiting.aborted ? this.waiting : undefined;
  }

  /** The task starts (once; a later attempt does not start it again): its start time is set and its time limit runs. */
  start(): void {
    if (this.#record.startedAt !== undefined) return;
    const startedAt = Date.now();
    this.#record.startedAt = startedAt;
    this.#onStart();
    const forward = () => this.#own.abort(this.waiting.reason);
    if (this.waiting.aborted) forward();
    else this.waiting.addEventListener("abort", forward, { once: true });
    const timeoutMs = this.#timeoutMs;
    const clearLimit =
      timeoutMs === undefined ? () => {} : startTimeLimit(startedAt, timeoutMs, () => this.#own.abort(new TaskTimeoutError("total", timeoutMs)));
    this.#release = () => {
      this.waiting.removeEventListener("abort", forward);
      clearLimit();
    };
  }

  /**
   * Stops the task from outside (a user's stop): one that waits ends without starting; one that has started ends at
   * once (its own stop follows `waiting`), also while it waits for a slot again, for a retry.
   */
  stop(reason: Error): void {
    this.#waiting.abort(reason);
  }

  /** The task has ended: its time limit and its following of what stops waiting work end too. */
  release(): void {
    this.#unfollow();
    this.#release();
  }

  /** What the task failed of: the stop's reason when a stop ended it, else the error itself. */
  reasonFor(error: unknown): unknown {
    const stop = this.stopped;
    return stop !== undefined && isStopError(error) ? stop.reason : error;
  }
}

function isStopError(error: unknown): boolean {
  return error instanceof AbortError || error instanceof QueueClearedError || (error instanceof Error && error.name === "AbortError");
}

export interface StartGateOptions {
  budgets: Pick<Budgets, "throwIfExceeded" | "forecast">;
  plan: Pick<PlanWindow, "wait" | "holding">;
  /** Undefined when the access check is off (accessCheck: false). */
  access: Pick<AccessCheck, "pass" | "probeLeased" | "probeEnded" | "refusal"> | undefined;
}

/** One try of a task, as the gate runs it. */
export interface GatedTry {
  /** Starts a process ahead for the task while it waits for the access check (see AccessCheck.pass). */
  startAhead(): void;
  /** Runs the work in a slot: the scheduler's, or the parent's that a child runs in. */
  inSlot(work: () => Promise<TurnResult>): Promise<TurnResult>;
  /** One attempt of the task; `leasing`, when it is the access probe, is called as it asks for its process. */
  attempt(leasing: (() => void) | undefined): Promise<TurnResult>;
}

/**
 * What a task passes on its way to a start. Each try: no budget over it is
 * reached; only the first task starts before it is known that a worker can
 * reach the model at all (the access check's probe). In its slot, before its
 * first start: a task its budgets plainly cannot pay for is held (the
 * forecast), and a plan window past its threshold holds the start until it
 * resets. A turn the plan refused before any tool ran waits for the reset
 * and runs again, instead of failing.
 */
export class StartGate {
  readonly #budgets: StartGateOptions["budgets"];
  readonly #plan: StartGateOptions["plan"];
  readonly #access: StartGateOptions["access"];

  constructor(options: StartGateOptions) {
    this.#budgets = options.budgets;
    this.#plan = options.plan;
    this.#access = options.access;
  }

  /** One try of the task (the retries are the caller's): through the gate, then its attempts in its slot. */
  async try(record: TaskRecord, stops: TaskStops, gated: GatedTry): Promise<TurnResult> {
    this.#budgets.throwIfExceeded(record.budgets);
    // Meanwhile, the tasks that wait for the probe may start their processes (they are under way: only those running count as busy).
    const probe = this.#access !== undefined && (await this.#access.pass(stops.stopped ?? stops.waiting, () => gated.startAhead()));
    try {
      return await gated.inSlot(() => this.#startAndAttempt(record, stops, probe ? () => this.#access?.probeLeased() : undefined, gated));
    } catch (failure) {
      // The probe's failure told that no work can run: that is what its task failed of, in the words that say what to do.
      throw (probe && this.#access?.refusal) || failure;
    } finally {
      if (probe) this.#access?.probeEnded();
    }
  }

  async #startAndAttempt(record: TaskRecord, stops: TaskStops, leasing: (() => void) | undefined, gated: GatedTry): Promise<TurnResult> {
    const short = record.startedAt === undefined ? this.#budgets.forecast(record.info.agent, record.budgets) : undefined;
    if (short) throw short;
    // The slot's signal is `waiting`, which the task's own stop follows from its start.
    await this.#plan.wait(stops.waiting);
    stops.start();
    for (;;) {
      try {
        return await gated.attempt(leasing);
      } catch (failure) {
        if (!refusedByPlan(record.attemptMessages) || anyToolRan(record.attemptMessages) || !this.#plan.holding) throw failure;
        await this.#plan.wait(stops.signal);
      }
    }
  }
}
