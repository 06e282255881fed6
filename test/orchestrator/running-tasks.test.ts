// Reaching one task under way by its name: a task that waits for a slot can be stopped, but has no turn to message or interrupt.
import { describe, expect, it } from "vitest";
import { TaskNotRunningError, TaskStoppedError } from "../../src/orchestrator/errors.ts";
import { RunningTasks } from "../../src/orchestrator/running-tasks.ts";
import type { SteerAction, TaskInfo } from "../../src/orchestrator/types.ts";

function tasks() {
  const told: [string, SteerAction, string | undefined][] = [];
  const running = new RunningTasks({
    told: (task, { action, origin }) => told.push([task.name, action, origin.from]),
    taken: () => {},
  });
  const stops: [string, unknown][] = [];
  const add = (info: TaskInfo) =>
    running.add(
      info,
      (reason) => stops.push([info.name, reason]),
      () => 0,
    );
  return { running, told, stops, add };
}

describe("RunningTasks", () => {
  it("stops a task that waits for a slot, which ends stopped by whoever asked; the action is told", () => {
    const { running, told, stops, add } = tasks();
    add({ id: "a", name: "queued", agent: undefined, parentId: undefined });
    expect(running.names).toEqual([]);
    running.stop("queued", { from: "the test" });
    expect(stops).toEqual([["queued", expect.any(TaskStoppedError)]]);
    expect((stops[0]![1] as Error).message).toBe("stopped by the test");
    expect(told).toEqual([["queued", "stop", "the test"]]);
  });

  it("says a task that waits for a slot cannot take a message or an interrupt, and that a stop ends it", async () => {
    const { running, told, add } = tasks();
    add({ id: "a", name: "queued", agent: undefined, parentId: undefined });
    expect(() => running.send("queued", "hello")).toThrow(/task "queued" waits for a slot: .*no turn to take a message \(a stop ends it\)/);
    await expect(running.interrupt("queued")).rejects.toThrow(/waits for a slot: .*no turn to interrupt/);
    expect(() => running.send("nobody", "hello")).toThrow('task "nobody" is not running (no task is running)');
    expect(() => running.stop("nobody")).toThrow(TaskNotRunningError);
    expect(told).toEqual([]);
  });

  it("forgets a task once it ends, and a later add of the same task outlives the earlier one's forget", () => {
    const { running, stops, add } = tasks();
    const forgetHeld = add({ id: "a", name: "queued", agent: undefined, parentId: undefined });
    const forgetExecuting = add({ id: "a", name: "queued", agent: undefined, parentId: undefined });
    forgetHeld();
    running.stop("queued");
    expect(stops).toHaveLength(1);
    forgetExecuting();
    expect(() => running.stop("queued")).toThrow(TaskNotRunningError);
  });
});
