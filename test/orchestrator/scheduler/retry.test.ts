import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CadreError } from "../../../src/errors.ts";
import { AbortError, retryWithBackoff } from "../../../src/orchestrator/scheduler/index.ts";

class Flaky extends CadreError {
  constructor(retryable: boolean) {
    super(retryable ? "OVERLOADED" : "BAD_REQUEST", retryable ? "try later" : "never works");
  }
}
const isRetryable = (error: unknown) => error instanceof Flaky && error.code === "OVERLOADED";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("retryWithBackoff", () => {
  it("retries retryable failures with growing, capped, jittered delays and returns the result", async () => {
    const attempts: number[] = [];
    const retries: Array<{ attempt: number; delayMs: number }> = [];
    const result = retryWithBackoff(
      async (attempt) => {
        attempts.push(attempt);
        if (attempt < 5) throw new Flaky(true);
        return "ok";
      },
      {
        retries: 5,
        isRetryable,
        baseDelayMs: 100,
        maxDelayMs: 400,
        onRetry: ({ attempt, delayMs, error }) => {
          expect(error).toBeInstanceOf(Flaky);
          retries.push({ attempt, delayMs });
        },
      },
    );
    await vi.runAllTimersAsync();
    expect(await result).toBe("ok");
    expect(attempts).toEqual([1, 2, 3, 4, 5]);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    const ceilings = [100, 200, 400, 400];
    retries.forEach(({ delayMs }, i) => {
      expect(delayMs).toBeGreaterThanOrEqual(ceilings[i]! / 2);
      expect(delayMs).toBeLessThanOrEqual(ceilings[i]!);
    });
  });

  it("waits the announced delay before the next attempt", async () => {
    const attempts: number[] = [];
    let delay = 0;
    const result = retryWithBackoff(
      async (attempt) => {
        attempts.push(attempt);
        if (attempt === 1) throw new Flaky(true);
        return attempt;
      },
      { retries: 1, isRetryable, baseDelayMs: 1000, onRetry: ({ delayMs }) => (delay = delayMs) },
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(delay).toBeGreaterThanOrEqual(500);
    await vi.advanceTimersByTimeAsync(delay - 1);
    expect(attempts).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toBe(2);
  });

  it("never retries an error isRetryable rejects", async () => {
    let calls = 0;
    const onRetry = vi.fn();
    const error = await retryWithBackoff(
      async () => {
        calls += 1;
        throw new Flaky(false);
      },
      { retries: 5, isRetryable, baseDelayMs: 1, onRetry },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "BAD_REQUEST" });
    expect(calls).toBe(1);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it("throws the last failure as it was once retries run out", async () => {
    let calls = 0;
    const result = retryWithBackoff(
      async () => {
        calls += 1;
        throw new Flaky(true);
      },
      { retries: 2, isRetryable, baseDelayMs: 10 },
    ).catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await result).toMatchObject({ code: "OVERLOADED" });
    expect(calls).toBe(3);
  });

  it("stops on abort during a back-off, and does not start when already aborted", async () => {
    const controller = new AbortController();
    let calls = 0;
    const result = retryWithBackoff(
      async () => {
        calls += 1;
        throw new Flaky(true);
      },
      { retries: 5, isRetryable, baseDelayMs: 1000, signal: controller.signal },
    ).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort("shutting down");
    const error = await result;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ code: "ABORTED", cause: "shutting down" });
    await vi.runAllTimersAsync();
    expect(calls).toBe(1);

    const fn = vi.fn(async () => 1);
    await expect(retryWithBackoff(fn, { retries: 1, isRetryable, signal: controller.signal })).rejects.toBeInstanceOf(AbortError);
    expect(fn).not.toHaveBeenCalled();
  });

  it("rejects a bad retry count", async () => {
    await expect(retryWithBackoff(async () => 1, { retries: -1, isRetryable })).rejects.toMatchObject({ code: "SCHEDULER_OPTION" });
  });
});
