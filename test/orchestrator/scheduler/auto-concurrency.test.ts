// Auto sizing of the workers, over a machine given by the test: cores, memory, and turns that compute or wait.
import { describe, expect, it } from "vitest";
import { AutoConcurrency, MAX_AUTO_CONCURRENCY, type MachineProbe, Scheduler } from "../../../src/orchestrator/scheduler/index.ts";
import { settle } from "../../support/wait.ts";

const GiB = 2 ** 30;
const machine = (cores: number, freeGiB: number): MachineProbe => ({ cores: () => cores, freeMemoryBytes: () => freeGiB * GiB });

describe("AutoConcurrency", () => {
  it("starts at the cores and stays there for turns that compute (the model answers at once)", () => {
    const auto = new AutoConcurrency(machine(2, 20));
    expect(auto.limit).toBe(2);
    for (let i = 0; i < 20; i++) auto.observe(400, 30, 2);
    expect(auto.limit).toBe(2);
  });

  it("adds a process only for a whole core's worth of waiting (a start costs about a CPU-second)", () => {
    // A model that answers at once: the CLI's own request and stream handling is about 30 % of its turn.
    // 2 / (1 - 0.3) keeps 2.9 processes busy: rounded down, no third one.
    const quick = new AutoConcurrency(machine(2, 20));
    expect(quick.observe(100, 30, 2)).toBe(2);
    // Half of each turn waiting: 2 / 0.5 = 4 processes keep both cores busy.
    const halfWaiting = new AutoConcurrency(machine(2, 20));
    expect(halfWaiting.observe(1000, 500, 2)).toBe(4);
  });

  it("grows, at most fourfold per turn, for turns that wait on the model, up to what keeps the cores busy", () => {
    const auto = new AutoConcurrency(machine(2, 20));
    // 5 s of a 5.3 s turn waiting: 2 cores keep about 2 / (1 - 0.94) = 34 such turns going.
    const seen = Array.from({ length: 8 }, () => auto.observe(5300, 5000, auto.limit));
    expect(seen.slice(0, 2)).toEqual([8, 32]);
    expect(auto.limit).toBe(Math.round(2 / (1 - 5000 / 5300)));
  });

  it("starts no more processes than the work left pays for", () => {
    const auto = new AutoConcurrency(machine(2, 20));
    // 47 tasks of 5.3 s left on 2 cores: √(47 · 5.3 · 2) ≈ 22 processes, not the 34 the waiting alone would keep busy.
    for (let i = 0; i < 8; i++) auto.observe(5300, 5000, auto.limit, 47);
    expect(auto.limit).toBe(Math.ceil(Math.sqrt(47 * 5.3 * 2)));
    // Near the end, a few tasks left: no more starts than they need.
    expect(auto.observe(5300, 5000, auto.limit, 3)).toBe(Math.ceil(Math.sqrt(3 * 5.3 * 2)));
  });

  it("never passes what free memory holds, nor the ceiling", () => {
    // 3 GiB free, 1 GiB kept back: eight more processes of 256 MB.
    const tight = new AutoConcurrency(machine(2, 3));
    for (let i = 0; i < 10; i++) tight.observe(10_000, 9_900, 2);
    expect(tight.limit).toBe(2 + 8);
    const roomy = new AutoConcurrency(machine(64, 200));
    for (let i = 0; i < 10; i++) roomy.observe(10_000, 9_900, roomy.limit);
    expect(roomy.limit).toBe(MAX_AUTO_CONCURRENCY);
  });

  it("comes back down when turns stop waiting (a busy machine slows them without the model)", () => {
    const auto = new AutoConcurrency(machine(2, 20));
    for (let i = 0; i < 6; i++) auto.observe(5300, 5000, auto.limit);
    expect(auto.limit).toBeGreaterThan(8);
    for (let i = 0; i < 30; i++) auto.observe(3000, 50, auto.limit);
    expect(auto.limit).toBe(2);
  });

  it("ignores turns that say nothing of their model time", () => {
    const auto = new AutoConcurrency(machine(4, 20));
    expect(auto.observe(5000, undefined, 4)).toBe(4);
    expect(auto.observe(0, 0, 4)).toBe(4);
  });
});

describe("Scheduler.resize", () => {
  it("starts waiting jobs at once when the limit grows, and only stops new starts when it shrinks", async () => {
    const scheduler = new Scheduler({ concurrency: 2 });
    const events: unknown[] = [];
    scheduler.onEvent((event) => event.type === "rate_limit" && events.push(event));
    const releases: (() => void)[] = [];
    const jobs = Array.from({ length: 6 }, () => scheduler.schedule(() => new Promise<void>((resolve) => releases.push(resolve))));
    await settle();
    expect(scheduler.running).toBe(2);
    scheduler.resize(5);
    await settle();
    expect(scheduler.running).toBe(5);
    scheduler.resize(1);
    await settle();
    expect(scheduler.running).toBe(5);
    for (const release of releases.splice(0)) release();
    await settle();
    expect(scheduler.running).toBe(1);
    while (releases.length > 0) {
      releases.shift()!();
      await settle();
    }
    await Promise.all(jobs);
    expect(scheduler.rateLimit).toMatchObject({ limit: 1, effectiveLimit: 1, rateLimited: false });
    // Sizing is not rate limiting: nothing was announced as such.
    expect(events).toEqual([]);
  });
});
