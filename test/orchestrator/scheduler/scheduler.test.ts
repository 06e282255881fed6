import { describe, expect, it } from "vitest";
import { AbortError, QueueClearedError, Scheduler, type SchedulerEvent } from "../../../src/orchestrator/scheduler/index.ts";
import { settle } from "../../support/wait.ts";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A job that runs until released, recording when it started. */
function gated(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const job = async () => {
    log.push(name);
    await done;
    return name;
  };
  return { job, release: () => release() };
}

/** Counts jobs running at once, overall and per key, from inside the jobs. */
function concurrencyMeter() {
  const now = new Map<string, number>();
  const peak = new Map<string, number>();
  const bump = (name: string, delta: number) => {
    const value = (now.get(name) ?? 0) + delta;
    now.set(name, value);
    peak.set(name, Math.max(peak.get(name) ?? 0, value));
  };
  return {
    peak: (name = "*") => peak.get(name) ?? 0,
    job:
      <T>(key: string | undefined, ms: number, value: T) =>
      async () => {
        bump("*", 1);
        if (key !== undefined) bump(key, 1);
        await sleep(ms);
        bump("*", -1);
        if (key !== undefined) bump(key, -1);
        return value;
      },
  };
}

describe("Scheduler limits", () => {
  it("never runs more than the global limit, and reaches it", async () => {
    const scheduler = new Scheduler({ concurrency: 4 });
    const meter = concurrencyMeter();
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => scheduler.schedule(meter.job(undefined, 5 + (i % 4) * 3, i))));
    expect(results).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(meter.peak()).toBe(4);
    expect(scheduler.peakRunning).toBe(4);
    expect(scheduler.counts()).toEqual({ running: 0, waiting: 0, byKey: {} });
  });

  it("holds per-key limits and the global limit together", async () => {
    const scheduler = new Scheduler({ concurrency: 5, keyLimits: { reviewer: 2, tester: 1 } });
    const meter = concurrencyMeter();
    const keys = ["reviewer", "tester", "writer", undefined] as const;
    await Promise.all(Array.from({ length: 40 }, (_, i) => scheduler.schedule(meter.job(keys[i % 4], 3 + (i % 5) * 2, i), { key: keys[i % 4] })));
    expect(meter.peak("reviewer")).toBe(2);
    expect(meter.peak("tester")).toBe(1);
    expect(meter.peak()).toBe(5);
    expect(scheduler.peakRunning).toBe(5);
  });

  it("does not let jobs held back by their key take global slots from other keys", async () => {
    const scheduler = new Scheduler({ concurrency: 4, keyLimits: { reviewer: 1 } });
    const log: string[] = [];
    const reviewers = Array.from({ length: 5 }, (_, i) => gated(log, `r${i}`));
    const writers = Array.from({ length: 3 }, (_, i) => gated(log, `w${i}`));
    const all = [
      ...reviewers.map((r) => scheduler.schedule(r.job, { key: "reviewer" })),
      ...writers.map((w) => scheduler.schedule(w.job, { key: "writer" })),
    ];
    await settle();
    // Four reviewers wait for their key; the writers scheduled after them run anyway.
    expect(log).toEqual(["r0", "w0", "w1", "w2"]);
    expect(scheduler.counts()).toEqual({
      running: 4,
      waiting: 4,
      byKey: { reviewer: { running: 1, waiting: 4 }, writer: { running: 3, waiting: 0 } },
    });
    // A writer finishing frees a global slot, but no reviewer may take it.
    writers[0]!.release();
    await settle();
    expect(scheduler.running).toBe(3);
    reviewers[0]!.release();
    await settle();
    expect(log).toEqual(["r0", "w0", "w1", "w2", "r1"]);
    for (const r of reviewers) r.release();
    for (const w of writers) w.release();
    await Promise.all(all);
    expect(log.filter((name) => name.startsWith("r"))).toEqual(["r0", "r1", "r2", "r3", "r4"]);
  });

  it("keeps invariants under a random mix of keys, priorities and durations", async () => {
    const limits = { a: 1, b: 2, c: 3 };
    const scheduler = new Scheduler({ concurrency: 4, keyLimits: limits });
    const running = new Map<string, number>();
    let violations = 0;
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const keys = ["a", "b", "c", "d"] as const;
    const jobs = Array.from({ length: 60 }, () => {
      const key = keys[Math.floor(random() * 4)]!;
      const ms = Math.floor(random() * 6);
      return scheduler.schedule(
        async () => {
          running.set(key, (running.get(key) ?? 0) + 1);
          const total = [...running.values()].reduce((sum, n) => sum + n, 0);
          if (total > 4 || (key in limits && running.get(key)! > limits[key as keyof typeof limits])) violations += 1;
          await sleep(ms);
          running.set(key, running.get(key)! - 1);
        },
        { key, priority: Math.floor(random() * 3) },
      );
    });
    await Promise.all(jobs);
    expect(violations).toBe(0);
    expect(scheduler.peakRunning).toBe(4);
  });
});

describe("Scheduler priorities", () => {
  it("starts higher priorities first, equal priorities in order", async () => {
    const scheduler = new Scheduler({ concurrency: 1 });
    const log: string[] = [];
    const first = gated(log, "first");
    const done: Promise<unknown>[] = [scheduler.schedule(first.job)];
    for (const [name, priority] of [
      ["a0", 0],
      ["b5", 5],
      ["c1", 1],
      ["d5", 5],
      ["e10", 10],
      ["f0", 0],
    ] as const) {
      done.push(scheduler.schedule(async () => log.push(name), { priority }));
    }
    first.release();
    await Promise.all(done);
    expect(log).toEqual(["first", "e10", "b5", "d5", "c1", "a0", "f0"]);
  });

  it("lets a higher-priority job take a key slot held by a lower one still waiting for a global slot", async () => {
    const scheduler = new Scheduler({ concurrency: 1, keyLimits: { a: 2 } });
    const log: string[] = [];
    const blocker = gated(log, "blocker");
    const jobs = ["a1", "a2", "a3", "a4"].map((name) => gated(log, name));
    const done = [scheduler.schedule(blocker.job, { key: "b" })];
    // a1 and a2 take both "a" slots and wait for the global slot; a3 waits for an "a" slot.
    done.push(scheduler.schedule(jobs[0]!.job, { key: "a" }));
    done.push(scheduler.schedule(jobs[1]!.job, { key: "a" }));
    done.push(scheduler.schedule(jobs[2]!.job, { key: "a" }));
    done.push(scheduler.schedule(jobs[3]!.job, { key: "a", priority: 10 }));
    await settle();
    expect(scheduler.counts().byKey).toEqual({ a: { running: 0, waiting: 4 }, b: { running: 1, waiting: 0 } });
    blocker.release();
    for (const job of jobs) {
      await settle();
      job.release();
    }
    await Promise.all(done);
    // a4 overtakes; a2 (sent back to wait for a key slot) still starts before a3, scheduled after it.
    expect(log).toEqual(["blocker", "a4", "a1", "a2", "a3"]);
    expect(scheduler.peakRunning).toBe(1);
  });
});

describe("Scheduler cancellation", () => {
  it("removes an aborted waiting job and rejects it with an AbortError", async () => {
    const scheduler = new Scheduler({ concurrency: 1, keyLimits: { a: 1 } });
    const log: string[] = [];
    const blocker = gated(log, "blocker");
    const done = scheduler.schedule(blocker.job, { key: "a" });
    const inGlobal = new AbortController();
    const inKey = new AbortController();
    // "b" waits for the global slot; the second "a" waits for its key slot.
    const waitingGlobal = scheduler.schedule(async () => void log.push("b"), { key: "b", signal: inGlobal.signal });
    const waitingKey = scheduler.schedule(async () => void log.push("a2"), { key: "a", signal: inKey.signal });
    const survivor = scheduler.schedule(async () => void log.push("c"));
    expect(scheduler.waiting).toBe(3);

    inGlobal.abort(new Error("user gave up"));
    inKey.abort();
    const [globalError, keyError] = await Promise.all([waitingGlobal.catch((e: unknown) => e), waitingKey.catch((e: unknown) => e)]);
    expect(globalError).toBeInstanceOf(AbortError);
    expect(globalError).toMatchObject({ code: "ABORTED", cause: new Error("user gave up") });
    expect(keyError).toBeInstanceOf(AbortError);
    expect(scheduler.waiting).toBe(1);

    blocker.release();
    await Promise.all([done, survivor, scheduler.onIdle()]);
    expect(log).toEqual(["blocker", "c"]);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const scheduler = new Scheduler({ concurrency: 1 });
    let ran = false;
    const error = await scheduler
      .schedule(
        async () => {
          ran = true;
        },
        { signal: AbortSignal.abort() },
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ABORTED" });
    expect(ran).toBe(false);
    expect(scheduler.counts()).toEqual({ running: 0, waiting: 0, byKey: {} });
  });

  it("keeps counting an aborted running job until it settles", async () => {
    const scheduler = new Scheduler({ concurrency: 1 });
    const log: string[] = [];
    const controller = new AbortController();
    let finish!: () => void;
    const running = scheduler.schedule(
      (signal) =>
        new Promise<string>((resolve) => {
          log.push("running");
          signal.addEventListener("abort", () => log.push("saw abort"));
          finish = () => resolve("finished anyway");
        }),
      { signal: controller.signal },
    );
    const next = scheduler.schedule(async () => void log.push("next"));
    await settle();
    controller.abort();
    await settle();
    // The job got the signal, but its slot is not freed until it ends.
    expect(log).toEqual(["running", "saw abort"]);
    expect(scheduler.running).toBe(1);
    finish();
    expect(await running).toBe("finished anyway");
    await next;
    expect(log).toEqual(["running", "saw abort", "next"]);
    expect(scheduler.peakRunning).toBe(1);
  });

  it("clear() rejects every waiting job with a typed error and leaves running ones alone", async () => {
    const scheduler = new Scheduler({ concurrency: 1, keyLimits: { a: 1 } });
    const log: string[] = [];
    const blocker = gated(log, "blocker");
    const running = scheduler.schedule(blocker.job, { key: "a" });
    const waiting = [
      scheduler.schedule(async () => void log.push("x")),
      scheduler.schedule(async () => void log.push("a2"), { key: "a" }),
      scheduler.schedule(async () => void log.push("y"), { key: "b", priority: 3 }),
    ].map((p) => p.catch((e: unknown) => e));
    await settle();
    scheduler.clear();
    const errors = await Promise.all(waiting);
    for (const error of errors) {
      expect(error).toBeInstanceOf(QueueClearedError);
      expect(error).toMatchObject({ code: "QUEUE_CLEARED" });
    }
    expect(scheduler.counts()).toEqual({ running: 1, waiting: 0, byKey: { a: { running: 1, waiting: 0 } } });
    blocker.release();
    expect(await running).toBe("blocker");
    await scheduler.onIdle();
    // The scheduler still works after a clear.
    await scheduler.schedule(async () => void log.push("after"), { key: "a" });
    expect(log).toEqual(["blocker", "after"]);
  });
});

describe("Scheduler control", () => {
  it("pause() holds new starts and resume() releases them", async () => {
    const scheduler = new Scheduler({ concurrency: 2 });
    const log: string[] = [];
    scheduler.pause();
    const done = [1, 2, 3].map((n) => scheduler.schedule(async () => void log.push(`j${n}`)));
    await settle();
    expect(log).toEqual([]);
    expect(scheduler.waiting).toBe(3);
    scheduler.resume();
    await Promise.all(done);
    expect(log).toEqual(["j1", "j2", "j3"]);
  });

  it("onIdle() waits for jobs held back by their key, not just the global queue", async () => {
    const scheduler = new Scheduler({ concurrency: 3, keyLimits: { a: 1 } });
    let finished = 0;
    for (let i = 0; i < 4; i += 1) {
      void scheduler.schedule(
        async () => {
          await sleep(3);
          finished += 1;
        },
        { key: "a" },
      );
    }
    await scheduler.onIdle();
    expect(finished).toBe(4);
    expect(scheduler.peakRunning).toBe(1);
  });

  it("passes job results and failures through, and emits start and finish events", async () => {
    const scheduler = new Scheduler({ concurrency: 2 });
    const events: SchedulerEvent[] = [];
    const countsSeen: Array<{ running: number; waiting: number }> = [];
    const stop = scheduler.onEvent((event) => {
      events.push(event);
      countsSeen.push({ running: scheduler.running, waiting: scheduler.waiting });
    });
    expect(await scheduler.schedule(async () => 42, { key: "k" })).toBe(42);
    await expect(scheduler.schedule(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(events).toEqual([
      { type: "job_started", key: "k" },
      { type: "job_finished", key: "k" },
      { type: "job_started", key: undefined },
      { type: "job_finished", key: undefined },
    ]);
    // Listeners see counts that already include the change they announce.
    expect(countsSeen).toEqual([
      { running: 1, waiting: 0 },
      { running: 0, waiting: 0 },
      { running: 1, waiting: 0 },
      { running: 0, waiting: 0 },
    ]);
    stop();
    await scheduler.schedule(async () => 1);
    expect(events).toHaveLength(4);
  });

  it("keeps its bookkeeping when an event listener throws", async () => {
    const scheduler = new Scheduler({ concurrency: 1 });
    scheduler.onEvent(() => {
      throw new Error("listener bug");
    });
    expect(await scheduler.schedule(async () => 7)).toBe(7);
    await scheduler.onIdle();
    await settle();
    expect([scheduler.running, scheduler.waiting]).toEqual([0, 0]);
  });

  it("rejects bad limits and priorities", async () => {
    expect(() => new Scheduler({ concurrency: 0 })).toThrow(/concurrency/);
    expect(() => new Scheduler({ concurrency: 2, keyLimits: { a: 1.5 } })).toThrow(/keyLimits\.a/);
    const scheduler = new Scheduler({ concurrency: 1 });
    await expect(scheduler.schedule(async () => 1, { priority: Number.NaN })).rejects.toMatchObject({ code: "SCHEDULER_OPTION" });
  });
});
