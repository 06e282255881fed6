// One attempt of a task: a worker, one turn, the worker given back; a stop interrupts the turn.
import { setTimeout as delay } from "node:timers/promises";
import type { AssistantMessage, CliMessage } from "../protocol/index.ts";
import { ProtocolError, type TurnResult, type Worker, WorkerClosedError, WorkerExitedError } from "../worker/index.ts";
import { TaskTimeoutError } from "./errors.ts";
import type { WorkerOrigin } from "./types.ts";
import type { Lease } from "./worker-pool.ts";

export interface AttemptOptions {
  /** A process for the attempt; `fresh` asks for a new one (an idle one just failed at once). */
  acquire(signal: AbortSignal, fresh: boolean): Promise<Lease>;
  prompt: string;
  /** The prompt goes as text only (see TaskSpec.verbatim). */
  verbatim?: boolean;
  /** Cancellation, the task's total time limit and the budget stop arrive here. */
  signal: AbortSignal;
  idleTimeoutMs: number | undefined;
  /** Called once the worker is up, to observe it; returns what stops observing it. */
  onStarted(worker: Worker, origin: WorkerOrigin): () => void;
  /** Holds the prompt of a worker that is up until it may go (the cache stagger); rejects with the signal's reason. */
  beforeSend?: (signal: AbortSignal) => Promise<void>;
  onMessage(message: CliMessage): void;
  /**
   * A turn that ended cleanly has its result: it is not held while its worker is given back (a process exiting, which a
   * kill meanwhile would catch with the result in the transcript but not in the record). Told how long that takes, so
   * that the slot stays taken until it is done; without it the attempt waits itself.
   */
  onGivingBack?(done: Promise<void>): void;
}

/** How long an interrupted turn may take to deliver its result before the worker is closed anyway. */
const INTERRUPT_GRACE_MS = 5_000;

/** A process taken from the pool that failed before it said anything: not the task's fault. */
class StaleProcess extends Error {}

/**
 * One attempt of a task: a worker, one turn, the worker given back (closed,
 * or kept for the next task). A stop (signal or idle limit) interrupts the
 * turn, waits briefly for its result, and throws the stop's reason.
 */
export async function runAttempt(options: AttemptOptions): Promise<TurnResult> {
  const idle = new AbortController();
  const stop = AbortSignal.any([options.signal, idle.signal]);
  const acquire = async (fresh: boolean) => {
    try {
      return await options.acquire(stop, fresh);
    } catch (error) {
      throw stop.aborted ? stop.reason : error;
    }
  };
  try {
    return await runTurn(await acquire(false), options, stop, idle);
  } catch (error) {
    if (!(error instanceof StaleProcess)) throw error;
    return runTurn(await acquire(true), options, stop, idle);
  }
}

async function runTurn(lease: Lease, options: AttemptOptions, stop: AbortSignal, idle: AbortController): Promise<TurnResult> {
  const { worker } = lease;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const idleMs = options.idleTimeoutMs;
  const resetIdle = () => {
    clearTimeout(idleTimer);
    if (idleMs !== undefined) idleTimer = setTimeout(() => idle.abort(new TaskTimeoutError("idle", idleMs)), idleMs);
  };
  // A stop raised by the turn's own result or last reply (the budget it reaches) comes after the work is done,
  // unless background work still runs: that is stopped with the turn.
  let resultSeen = false;
  let lastReplySeen = false;
  let heard = false;
  const off = worker.on((event) => {
    if (event.type !== "message") return;
    heard = true;
    resetIdle();
    const { message } = event;
    if (message.type === "result") resultSeen = worker.runningBackgroundTasks.length === 0;
    else if (message.type === "assistant") lastReplySeen = isLastReply(message) && worker.runningBackgroundTasks.length === 0;
    options.onMessage(message);
  });
  const unobserve = options.onStarted(worker, lease.origin);
  let clean: TurnResult | undefined;
  let onStop = () => {};
  try {
    await options.beforeSend?.(stop);
    resetIdle();
    const collected = worker.send(options.prompt, { signal: stop, verbatim: options.verbatim }).collect();
    let stoppedAfterResult = false;
    let stoppedAfterLastReply = false;
    const stopped = new Promise<"stopped">((resolve) => {
      onStop = () => {
        stoppedAfterResult = resultSeen;
        stoppedAfterLastReply = lastReplySeen;
        resolve("stopped");
      };
      if (stop.aborted) onStop();
      else stop.addEventListener("abort", onStop, { once: true });
    });
    const first = await Promise.race([collected, stopped]).catch((error: unknown) => {
      const failedAtOnce = lease.origin !== "cold" && !heard && !stop.aborted;
      throw failedAtOnce && isProcessFailure(error) ? new StaleProcess("an idle process failed at once", { cause: error }) : error;
    });
    if (first !== "stopped") {
      clean = first;
      return first;
    }
    const late = await Promise.race([collected.catch(() => undefined), delay(INTERRUPT_GRACE_MS, undefined, { ref: false })]);
    // A turn stopped after its last reply (the reply reached the budget) had finished its work: its clean result stands.
    if (!late || !(stoppedAfterResult || (stoppedAfterLastReply && !late.isError))) throw stop.reason;
    clean = late;
    return late;
  } finally {
    clearTimeout(idleTimer);
    // The stop signal is a composite Node keeps alive while it has listeners: the attempt must not stay on it.
    stop.removeEventListener("abort", onStop);
    off();
    unobserve();
    const givingBack = lease.release(clean && !clean.isError ? clean.messages : undefined);
    if (clean && !clean.isError && options.onGivingBack) options.onGivingBack(givingBack);
    else await givingBack;
  }
}

/** A reply of the main conversation that calls no tool: the turn's answer, after which it ends. */
function isLastReply(message: AssistantMessage): boolean {
  return message.parent_tool_use_id == null && message.message.content.every((block) => block.type !== "tool_use");
}

function isProcessFailure(error: unknown): boolean {
  return error instanceof WorkerExitedError || error instanceof WorkerClosedError || error instanceof ProtocolError;
}
