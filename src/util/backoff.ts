// Exponential back-off, the one rule of every wait between tries: the scheduler's retries and rate limits, git's locks.

/**
 * Exponential back-off with "equal jitter": the ceiling doubles per attempt up
 * to `maxDelayMs`, and the delay is drawn from the upper half of it. Jitter
 * keeps many workers that failed together from retrying together; keeping the
 * lower half out guarantees each wait is at least half the nominal back-off.
 *
 * `attempt` counts from 0 (the first back-off is at most `baseDelayMs`).
 */
export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
