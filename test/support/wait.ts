// Waiting in tests: on a condition a test cannot subscribe to (a line printed, a process gone, a file written),
// which vitest's vi.waitFor polls (a boolean one needs no helper: `await expect.poll(() => …).toBe(true)`),
// or for what is already due to run.
import { vi } from "vitest";

/** The first value `probe` gives that is not undefined, polled every 50 ms for at most `timeoutMs`. */
export function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, what = "the condition"): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      return value;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

/**
 * One turn of the event loop: the promise callbacks already due run first (p-queue's deferred slot releases too).
 * setImmediate, which the tests' fake clocks leave real (they fake timeouts and Date).
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
