// Retrying a failed attempt with a doubling, jittered back-off, for the errors a caller approves.
import { setTimeout as delay } from "node:timers/promises";
import { AbortError } from "../../errors.ts";
import { backoffDelay } from "../../util/backoff.ts";
import { requireDelay, SchedulerOptionError } from "./errors.ts";

export interface RetryOptions {
  /** Retries after the first attempt (0 = try once). */
  retries: number;
  /** Only errors this approves are retried; any other is thrown at once. */
  isRetryable: (error: unknown) => boolean;
  /** Ceiling of the first back-off; it doubles per retry. Default 1000. */
  baseDelayMs?: number;
  /** Cap on any back-off. Default 30000. */
  maxDelayMs?: number;
  /** Aborting stops further attempts: a pending back-off rejects with an AbortError. */
  signal?: AbortSignal;
  /** Called before each back-off; `attempt` is the attempt that failed (1-based). */
  onRetry?: (info: { error: unknown; attempt: number; delayMs: number }) => void;
}

/**
 * Calls `fn` until it succeeds, retrying retryable failures with exponential
 * back-off and jitter. The last failure is thrown as it was, so callers can
 * still switch on its `code`. `fn` receives the 1-based attempt number.
 */
export async function retryWithBackoff<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { retries, isRetryable, signal, onRetry } = options;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new SchedulerOptionError("retries", "a whole number from 0 and up", retries);
  }
  const baseDelayMs = requireDelay("baseDelayMs", options.baseDelayMs ?? 1000);
  const maxDelayMs = requireDelay("maxDelayMs", options.maxDelayMs ?? 30_000);
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) throw new AbortError("retrying", signal.reason);
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt > retries || !isRetryable(error)) throw error;
      const delayMs = backoffDelay(attempt - 1, baseDelayMs, maxDelayMs);
      onRetry?.({ error, attempt, delayMs });
      await delay(delayMs, undefined, { signal }).catch(() => {
        throw new AbortError("retrying", signal?.reason);
      });
    }
  }
}
