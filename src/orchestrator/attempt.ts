import type { CliMessage } from "../protocol/index.ts";
import { type TurnResult, Worker, type WorkerOptions } from "../worker/index.ts";
import { TaskTimeoutError } from "./errors.ts";

export interface AttemptOptions {
  workerOptions: WorkerOptions;
  prompt: string;
  /** Cancellation, the task's total time limit and the budget stop arrive here. */
  signal: AbortSignal;
  idleTimeoutMs: number | undefined;
  /** Called once the worker is up, to observe it. */
  onStarted(worker: Worker): void;
  /** Holds the prompt of a worker that is up until it may go (the cache stagger); rejects with the signal's reason. */
  beforeSend?: (signal: AbortSignal) => Promise<void>;
  onMessage(message: CliMessage): void;
}

/** How long an interrupted turn may take to deliver its result before the worker is closed anyway. */
const INTERRUPT_GRACE_MS = 5_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/**
 * One attempt of a task: a fresh worker, one turn, the worker closed again.
 * A stop (signal or idle limit) interrupts the turn, waits briefly for its
 * result, and throws the stop's reason.
 */
export async function runAttempt(options: AttemptOptions): Promise<TurnResult> {
  const idle = new AbortController();
  const stop = AbortSignal.any([options.signal, idle.signal]);
  let worker: Worker;
  try {
    worker = await Worker.start(options.workerOptions, stop);
  } catch (error) {
    throw stop.aborted ? stop.reason : error;
  }
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const idleMs = options.idleTimeoutMs;
  const resetIdle = () => {
    clearTimeout(idleTimer);
    if (idleMs !== undefined) idleTimer = setTimeout(() => idle.abort(new TaskTimeoutError("idle", idleMs)), idleMs);
  };
  // A stop raised by the turn's own result (the budget it reaches) comes after the work is done.
  let resultSeen = false;
  const off = worker.on((event) => {
    if (event.type !== "message") return;
    resetIdle();
    if (event.message.type === "result") resultSeen = true;
    options.onMessage(event.message);
  });
  try {
    options.onStarted(worker);
    await options.beforeSend?.(stop);
    resetIdle();
    const collected = worker.send(options.prompt, { signal: stop }).collect();
    let stoppedAfterResult = false;
    const stopped = new Promise<"stopped">((resolve) => {
      const onStop = () => {
        stoppedAfterResult = resultSeen;
        resolve("stopped");
      };
      if (stop.aborted) onStop();
      else stop.addEventListener("abort", onStop, { once: true });
    });
    const first = await Promise.race([collected, stopped]);
    if (first !== "stopped") return first;
    const late = await Promise.race([collected.catch(() => undefined), sleep(INTERRUPT_GRACE_MS)]);
    if (late && stoppedAfterResult) return late;
    throw stop.reason;
  } finally {
    clearTimeout(idleTimer);
    await worker.close();
    off();
  }
}
