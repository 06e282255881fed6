// The lease policy with a pool and a scheduler given by the test (no processes): reuse, the cache stagger, a budget's cap, auto concurrency.
import { describe, expect, it } from "vitest";
import { Budget } from "../../src/orchestrator/budget.ts";
import { CacheStagger } from "../../src/orchestrator/cache-stagger.ts";
import { LeasePolicy, type LeasePolicyOptions } from "../../src/orchestrator/lease-policy.ts";
import { AutoConcurrency, type MachineProbe } from "../../src/orchestrator/scheduler/index.ts";
import type { TaskRecord } from "../../src/orchestrator/task-record.ts";
import type { BoundWorker } from "../../src/orchestrator/worker-binding.ts";
import type { WorkerPlan } from "../../src/orchestrator/worker-factory.ts";
import type { Lease } from "../../src/orchestrator/worker-pool.ts";
import { parseCliMessage } from "../../src/protocol/index.ts";
import type { TurnResult, WorkerOptions } from "../../src/worker/index.ts";
import { taskRecord } from "../support/task-record.ts";

const never = new AbortController().signal;
const machine: MachineProbe = { cores: () => 2, freeMemoryBytes: () => 20 * 2 ** 30 };

/** A plan whose starts are listed (with the settings each added), and a pool whose leases are. */
function rig(options: Partial<LeasePolicyOptions> = {}) {
  const starts: (Partial<WorkerOptions> | undefined)[] = [];
  const plan: WorkerPlan<TaskRecord> = {
    key: "k",
    settings: { model: "claude-x" },
    start: async (_signal, extra) => {
      starts.push(extra);
      return {} as BoundWorker<TaskRecord>;
    },
    adopt: () => {},
  };
  const leases: { maxTasks: number; fresh: boolean | undefined }[] = [];
  const policy = new LeasePolicy({
    reuse: undefined,
    stagger: undefined,
    autoConcurrency: undefined,
    pool: {
      lease: async (leased, { maxTasks, signal, fresh }) => {
        leases.push({ maxTasks, fresh });
        await leased.start(signal);
        return {} as Lease;
      },
    },
    scheduler: { running: 0, waiting: 0, resize: () => {} },
    processLimitUsd: () => undefined,
    ...options,
  });
  return { policy, plan, starts, leases };
}

describe("the lease policy", () => {
  it.each([
    ["no reuse: one task per process", {}, {}, 1],
    ["reuse: true", { reuse: true }, {}, 50],
    ["reuse: a number of tasks", { reuse: 7 }, {}, 7],
    ["the agent's reuse wins over the orchestrator's", { reuse: true }, { agent: { reuse: false } }, 1],
    ["auto concurrency reuses unless told not to", { autoConcurrency: new AutoConcurrency(machine) }, {}, 50],
    ["auto concurrency told not to", { autoConcurrency: new AutoConcurrency(machine), reuse: false }, {}, 1],
    ["a task that continues a session has a process started on it", { reuse: true }, { overrides: { resume: "s1" } }, 1],
  ] as const)("%s", async (_, options, task, maxTasks) => {
    const { policy, plan, leases } = rig(options as Partial<LeasePolicyOptions>);
    await policy.lease(taskRecord(task as Partial<TaskRecord>), plan).acquire(never, false);
    expect(leases).toEqual([{ maxTasks, fresh: false }]);
  });

  it("under a budget the CLI enforces, leases a fresh process of the task's own, started with what is left", async () => {
    const budget = new Budget(2, undefined, { kind: "agent", name: "a" });
    const { policy, plan, leases, starts } = rig({ reuse: true, processLimitUsd: (budgets) => (budgets.includes(budget) ? 1.5 : undefined) });
    await policy.lease(taskRecord({ budgets: [budget] }), plan).acquire(never, false);
    expect(leases).toEqual([{ maxTasks: 1, fresh: true }]);
    expect(starts).toEqual([{ maxBudgetUsd: 1.5 }]);
  });

  it("with the cache stagger, a cold group's lease leads, streaming partial messages the task does not see; once warm, one follows", async () => {
    const { policy, plan, starts } = rig({ stagger: new CacheStagger({}) });
    const leader = policy.lease(taskRecord(), plan);
    expect([leader.ticket?.mayLead, leader.hidePartial]).toEqual([true, true]);
    await leader.acquire(never, false);
    await leader.ticket?.ready(never);
    leader.ticket?.observe(parseCliMessage({ type: "system", subtype: "status", status: "requesting", session_id: "s" }));
    leader.ticket?.observe(
      parseCliMessage({
        type: "stream_event",
        event: { type: "message_start", message: { role: "assistant", content: [], usage: {} } },
        session_id: "s",
      }),
    );
    const follower = policy.lease(taskRecord(), plan);
    expect([follower.ticket?.mayLead, follower.hidePartial]).toEqual([false, true]);
    await follower.acquire(never, false);
    expect(starts).toEqual([{ includePartialMessages: true }, undefined]);
    leader.ticket?.release();
    follower.ticket?.release();
  });

  it("without the cache stagger, has no ticket and hides nothing", async () => {
    const { policy, plan, starts } = rig();
    const lease = policy.lease(taskRecord(), plan);
    expect(lease.ticket).toBeUndefined();
    expect(lease.hidePartial).toBe(false);
    await lease.acquire(never, true);
    expect(starts).toEqual([undefined]);
  });

  it("under auto concurrency, sizes the scheduler by a turn's timings; otherwise leaves it alone", () => {
    const turn = { durationMs: 1_000, result: { duration_api_ms: 500 } } as unknown as TurnResult;
    const sizes: number[] = [];
    const scheduler = { running: 2, waiting: 10, resize: (limit: number) => sizes.push(limit) };
    rig({ scheduler }).policy.succeeded(turn);
    expect(sizes).toEqual([]);
    rig({ scheduler, autoConcurrency: new AutoConcurrency(machine) }).policy.succeeded(turn);
    // Half of each turn waiting on the model: 2 cores keep 4 such turns going.
    expect(sizes).toEqual([new AutoConcurrency(machine).observe(1_000, 500, 2, 11)]);
    expect(sizes).toEqual([4]);
  });
});
