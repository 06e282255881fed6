// Waiting on a condition a test cannot subscribe to (a line printed, a process gone, a file written):
// vitest's vi.waitFor polls it. A boolean condition needs no helper: `await expect.poll(() => …).toBe(true)`.
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
