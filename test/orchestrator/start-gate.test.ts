// The start gate with the orchestrator's own access check, budgets and plan window, and attempts given by the test (no processes):
// the time limit from the start, the forecast, the plan window before a start and after a refused turn, the access probe.
import { afterEach, describe, expect, it, vi } from "vitest";
import { AbortError } from "../../src/errors.ts";
import { AccessCheck } from "../../src/orchestrator/access-check.ts";
import { Budgets } from "../../src/orchestrator/budgets.ts";
import { BudgetExceededError, NotLoggedInError, TaskTimeoutError } from "../../src/orchestrator/errors.ts";
import { PlanWindow } from "../../src/orchestrator/plan-window.ts";
import { type GatedTry, StartGate, TaskStops } from "../../src/orchestrator/start-gate.ts";
import type { TaskRecord } from "../../src/orchestrator/task-record.ts";
import { type CliMessage, parseCliMessage } from "../../src/protocol/index.ts";
import type { TurnResult } from "../../src/worker/index.ts";
import { taskRecord } from "../support/task-record.ts";

const turn = { text: "done" } as TurnResult;
const notLoggedIn = parseCliMessage({
  type: "result",
  subtype: "success",
  is_error: true,
  result: "Not logged in · Please run /login",
  session_id: "s",
});
const toolCall = parseCliMessage({
  type: "assistant",
  message: { role: "assistant", model: "claude-x", content: [{ type: "tool_use", id: "t", name: "Bash", input: {} }] },
  session_id: "s",
});
/** The plan refuses: no start until `resetsInMs` from now. */
const planRefusal = (resetsInMs: number): CliMessage =>
  parseCliMessage({ type: "rate_limit_event", rate_limit_info: { status: "rejected", resetsAt: (Date.now() + resetsInMs) / 1000 }, session_id: "s" });

/** A gate over the orchestrator's own parts; `accessCheck: false` turns the check off, as the option does. */
function rig(options: { runUsd?: number; accessCheck?: false } = {}) {
  const budgets = new Budgets({ runUsd: options.runUsd, agentUsd: {}, ledgerFor: () => undefined, onReached: () => {} });
  const plan = new PlanWindow({ pauseAt: undefined, tell: () => {} });
  const access = new AccessCheck(() => {});
  const gate = new StartGate({ budgets, plan, access: options.accessCheck === false ? undefined : access });
  const record = taskRecord({ budgets: [budgets.run] });
  const starts: number[] = [];
  const stops = new TaskStops(record, new AbortController().signal, 1_000, () => starts.push(Date.now()));
  return { budgets, plan, access, gate, record, stops, starts };
}

/** A try whose slot is given at once, and whose attempts are `attempt`'s. */
function gated(attempt: GatedTry["attempt"]): GatedTry {
  return { startAhead: () => {}, inSlot: (work) => work(), attempt };
}

/** Whether the promise settled within a few event-loop turns. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the start gate", () => {
  it("starts the task once, at its first attempt, and its time limit counts from there", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { gate, record, stops, starts } = rig({ accessCheck: false });
    vi.advanceTimersByTime(5_000); // waiting for a slot: not the task's time
    await expect(
      gate.try(
        record,
        stops,
        gated(async () => turn),
      ),
    ).resolves.toBe(turn);
    await gate.try(
      record,
      stops,
      gated(async () => turn),
    );
    expect(starts).toEqual([record.startedAt]);
    vi.advanceTimersByTime(999);
    expect(stops.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(stops.signal.reason).toBeInstanceOf(TaskTimeoutError);
    expect(stops.stopped).toBe(stops.signal);
    stops.release();
  });

  it("holds a task its budgets plainly cannot pay for before its first start, not a retry of one that started", async () => {
    const { gate, budgets, record, stops } = rig({ runUsd: 1, accessCheck: false });
    budgets.finished(undefined, 2);
    const attempt = vi.fn(async () => turn);
    await expect(gate.try(record, stops, gated(attempt))).rejects.toBeInstanceOf(BudgetExceededError);
    expect([attempt.mock.calls.length, record.startedAt]).toEqual([0, undefined]);
    record.startedAt = Date.now();
    await expect(gate.try(record, stops, gated(attempt))).resolves.toBe(turn);
  });

  it("holds the start while a plan window refuses, and runs a turn the plan refused again after the reset", async () => {
    // Real time (the window waits with node:timers/promises), in bounds a loaded machine only lengthens.
    const { gate, plan, record, stops } = rig({ accessCheck: false });
    const begun = Date.now();
    plan.observe(planRefusal(300));
    const attempts: number[] = [];
    const tried = gate.try(
      record,
      stops,
      gated(async () => {
        attempts.push(Date.now());
        if (attempts.length > 1) return turn;
        record.attemptMessages = [planRefusal(200)];
        plan.observe(record.attemptMessages[0]!);
        throw new Error("the plan's limit is reached");
      }),
    );
    expect(await settled(tried)).toBe(false);
    await expect(tried).resolves.toBe(turn);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]! - begun).toBeGreaterThanOrEqual(290);
    expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(190);
    stops.release();
    plan.close();
  });

  it("fails a turn the plan refused after a tool ran (running it again would repeat the tool)", async () => {
    const { gate, plan, record, stops } = rig({ accessCheck: false });
    const failure = new Error("the plan's limit is reached");
    const attempt = vi.fn(async () => {
      record.attemptMessages = [toolCall, planRefusal(60_000)];
      plan.observe(record.attemptMessages[1]!);
      throw failure;
    });
    await expect(gate.try(record, stops, gated(attempt))).rejects.toBe(failure);
    expect(attempt).toHaveBeenCalledTimes(1);
    stops.release();
    plan.close();
  });

  it("lets the first task probe the access, tells the check as it leases, and fails it and the next with the check's refusal", async () => {
    const { gate, access, record, stops } = rig();
    const probe = gate.try(
      record,
      stops,
      gated(async (leasing) => {
        leasing?.();
        access.observe(notLoggedIn);
        throw new Error("the turn ended in error");
      }),
    );
    await expect(probe).rejects.toBeInstanceOf(NotLoggedInError);
    const next: TaskRecord = taskRecord({ budgets: record.budgets });
    const attempt = vi.fn(async () => turn);
    await expect(gate.try(next, stops, gated(attempt))).rejects.toBeInstanceOf(NotLoggedInError);
    expect(attempt).not.toHaveBeenCalled();
    stops.release();
  });

  it("gives an attempt nothing to tell when the access check is off", async () => {
    const { gate, record, stops } = rig({ accessCheck: false });
    const attempt = vi.fn(async (_leasing: (() => void) | undefined) => turn);
    await gate.try(record, stops, gated(attempt));
    expect(attempt).toHaveBeenCalledWith(undefined);
    stops.release();
  });
});

describe("a task's stops", () => {
  it("say a stop's reason for the error a stop caused, and any other error as it is", () => {
    const waiting = new AbortController();
    const stops = new TaskStops(taskRecord(), waiting.signal, undefined, () => {});
    const other = new Error("the turn ended in error");
    expect(stops.reasonFor(new AbortError("the turn"))).toBeInstanceOf(AbortError);
    waiting.abort(new Error("closed"));
    expect(stops.stopped).toBe(stops.waiting);
    expect(stops.reasonFor(new AbortError("the turn"))).toBe(waiting.signal.reason);
    expect(stops.reasonFor(other)).toBe(other);
  });

  it("follow what stops waiting work from the start on", () => {
    const waiting = new AbortController();
    const stops = new TaskStops(taskRecord(), waiting.signal, undefined, () => {});
    stops.start();
    waiting.abort(new Error("closed"));
    expect(stops.signal.reason).toBe(waiting.signal.reason);
    expect(stops.stopped).toBe(stops.signal);
  });

  it("stop a task that waits on its own, not the others that wait on the same signal, and let go of that signal once ended", () => {
    const waiting = new AbortController();
    const listeners = vi.spyOn(waiting.signal, "removeEventListener");
    const stopped = new TaskStops(taskRecord(), waiting.signal, undefined, () => {});
    const other = new TaskStops(taskRecord(), waiting.signal, undefined, () => {});
    const reason = new Error("stopped by the test");
    stopped.stop(reason);
    expect(stopped.waiting.aborted).toBe(true);
    expect(stopped.reasonFor(new AbortError("the queued job"))).toBe(reason);
    expect(other.stopped).toBeUndefined();
    expect(waiting.signal.aborted).toBe(false);
    stopped.release();
    expect(listeners).toHaveBeenCalledWith("abort", expect.any(Function));
    other.release();
  });

  it("stop a task that has started by its own signal, and its wait for a slot again (a retry's), its time limit released with it", () => {
    const stops = new TaskStops(taskRecord(), new AbortController().signal, 60_000, () => {});
    stops.start();
    const reason = new Error("stopped by the test");
    stops.stop(reason);
    expect(stops.signal.reason).toBe(reason);
    expect(stops.waiting.reason).toBe(reason);
    expect(stops.stopped).toBe(stops.signal);
    stops.release();
  });
});
