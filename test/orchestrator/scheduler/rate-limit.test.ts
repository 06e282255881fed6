import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AdaptiveLimit, type RateLimitState, Scheduler } from "../../../src/orchestrator/scheduler/index.ts";
import { settle } from "../../support/wait.ts";

function gatedJobs(count: number) {
  const started: number[] = [];
  const releases: Array<() => void> = [];
  const jobs = Array.from({ length: count }, (_, i) => {
    const done = new Promise<void>((resolve) => (releases[i] = resolve));
    return async () => {
      started.push(i);
      await done;
    };
  });
  return { started, jobs, release: (i: number) => releases[i]!() };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe("Scheduler under rate limits", () => {
  it("halves the limit, backs off before the next start, and recovers one step per success", async () => {
    const scheduler = new Scheduler({ concurrency: 4, rateLimit: { baseBackoffMs: 1000, maxBackoffMs: 8000 } });
    const { started, jobs, release } = gatedJobs(8);
    const done = jobs.map((job) => scheduler.schedule(job));
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);

    const t0 = Date.now();
    scheduler.reportRateLimited();
    const limited = scheduler.rateLimit;
    expect(limited).toMatchObject({ limit: 4, effectiveLimit: 2, rateLimited: true });
    const backoff = limited.backoffUntil! - t0;
    expect(backoff).toBeGreaterThanOrEqual(500);
    expect(backoff).toBeLessThanOrEqual(1000);
    // Running jobs are not stopped by the decrease.
    expect(scheduler.running).toBe(4);

    // Three finish: one runs, below the effective limit of 2, yet nothing starts during the back-off.
    release(0);
    release(1);
    release(2);
    await settle();
    expect(scheduler.running).toBe(1);
    await vi.advanceTimersByTimeAsync(backoff - 1);
    expect(started).toEqual([0, 1, 2, 3]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    // Back-off over: starts up to the effective limit only.
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(scheduler.running).toBe(2);
    expect(scheduler.rateLimit).toEqual({ limit: 4, effectiveLimit: 2, backoffUntil: null, rateLimited: true });

    scheduler.reportSuccess();
    await settle();
    expect(scheduler.rateLimit.effectiveLimit).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    scheduler.reportSuccess();
    await settle();
    expect(scheduler.rateLimit).toEqual({ limit: 4, effectiveLimit: 4, backoffUntil: null, rateLimited: false });
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    scheduler.reportSuccess();
    expect(scheduler.rateLimit.effectiveLimit).toBe(4);

    for (let i = 3; i < 8; i += 1) release(i);
    await Promise.all(done);
    expect(scheduler.peakRunning).toBe(4);
  });

  it("honours a server's retry-after exactly", async () => {
    // Halved to 2, the limit still leaves room for the second job: only the back-off holds it.
    const scheduler = new Scheduler({ concurrency: 4 });
    const { started, jobs, release } = gatedJobs(2);
    const first = scheduler.schedule(jobs[0]!);
    await settle();
    const t0 = Date.now();
    scheduler.reportRateLimited({ retryAfterMs: 5000 });
    expect(scheduler.rateLimit.backoffUntil).toBe(t0 + 5000);
    const second = scheduler.schedule(jobs[1]!);
    await vi.advanceTimersByTimeAsync(4999);
    expect(started).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(started).toEqual([0, 1]);
    release(0);
    release(1);
    await Promise.all([first, second]);
  });

  it("treats reports during a back-off as one episode, doubles the back-off per episode, and never goes below 1", async () => {
    const scheduler = new Scheduler({ concurrency: 16, rateLimit: { baseBackoffMs: 1000, maxBackoffMs: 4000 } });
    const limits: number[] = [];
    const delays: number[] = [];
    for (let episode = 0; episode < 6; episode += 1) {
      const t0 = Date.now();
      scheduler.reportRateLimited();
      // Other workers hitting the same limit in the same episode change nothing...
      scheduler.reportRateLimited();
      scheduler.reportSuccess();
      const state = scheduler.rateLimit;
      limits.push(state.effectiveLimit);
      delays.push(state.backoffUntil! - t0);
      await vi.advanceTimersByTimeAsync(state.backoffUntil! - t0);
    }
    expect(limits).toEqual([8, 4, 2, 1, 1, 1]);
    const ceilings = [1000, 2000, 4000, 4000, 4000, 4000];
    delays.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(ceilings[i]! / 2);
      expect(delay).toBeLessThanOrEqual(ceilings[i]!);
    });

    // ...except a longer retry-after, which extends the back-off.
    const t1 = Date.now();
    scheduler.reportRateLimited({ retryAfterMs: 100 });
    scheduler.reportRateLimited({ retryAfterMs: 3000 });
    expect(scheduler.rateLimit.backoffUntil).toBe(t1 + 3000);
    await vi.advanceTimersByTimeAsync(3000);

    // A success after the back-off resets the exponent.
    scheduler.reportSuccess();
    const t2 = Date.now();
    scheduler.reportRateLimited();
    expect(scheduler.rateLimit.backoffUntil! - t2).toBeLessThanOrEqual(1000);
  });

  it("publishes every change of the effective limit or back-off as a rate_limit event", async () => {
    const scheduler = new Scheduler({ concurrency: 2, rateLimit: { baseBackoffMs: 200 } });
    const states: RateLimitState[] = [];
    scheduler.onEvent((event) => {
      if (event.type === "rate_limit") states.push(event.state);
    });
    scheduler.reportSuccess(); // at the limit already: no change, no event
    scheduler.reportRateLimited();
    const until = scheduler.rateLimit.backoffUntil!;
    await vi.advanceTimersByTimeAsync(200);
    scheduler.reportSuccess();
    expect(states).toEqual([
      { limit: 2, effectiveLimit: 1, backoffUntil: until, rateLimited: true },
      { limit: 2, effectiveLimit: 1, backoffUntil: null, rateLimited: true },
      { limit: 2, effectiveLimit: 2, backoffUntil: null, rateLimited: false },
    ]);
  });

  it("keeps a user pause in force when a back-off ends", async () => {
    const scheduler = new Scheduler({ concurrency: 1 });
    const { started, jobs, release } = gatedJobs(1);
    scheduler.reportRateLimited({ retryAfterMs: 100 });
    scheduler.pause();
    const done = scheduler.schedule(jobs[0]!);
    await vi.advanceTimersByTimeAsync(200);
    expect(started).toEqual([]);
    scheduler.resume();
    await settle();
    expect(started).toEqual([0]);
    release(0);
    await done;
  });
});

describe("AdaptiveLimit", () => {
  it("needs successesPerStep successes per step and ignores successes during a back-off", () => {
    const limit = new AdaptiveLimit(8, { successesPerStep: 2 });
    limit.rateLimited(0, 1000);
    expect(limit.state(0).effectiveLimit).toBe(4);
    limit.succeeded(500);
    limit.succeeded(600);
    expect(limit.state(600).effectiveLimit).toBe(4);
    limit.succeeded(1000);
    expect(limit.state(1000).effectiveLimit).toBe(4);
    limit.succeeded(1001);
    expect(limit.state(1001)).toEqual({ limit: 8, effectiveLimit: 5, backoffUntil: null, rateLimited: true });
  });
});
