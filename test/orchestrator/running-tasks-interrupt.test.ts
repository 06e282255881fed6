// Reaching one running task by its name, on a real claude worker: an interrupt reaches only a turn that runs.
import { describe, expect, it } from "vitest";
import { TaskNotRunningError } from "../../src/orchestrator/index.ts";
import { RunningTasks } from "../../src/orchestrator/running-tasks.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("a run's running tasks", () => {
  it("refuses an interrupt while the task's worker has no turn to end, and records none", { timeout: 60_000 }, async () => {
    const server = await createRehearsal({ idle: [{ text: "answered" }] });
    const { worker } = await startRehearsedWorker(server, "idle");
    const told: string[] = [];
    const tasks = new RunningTasks({ told: (task, { action }) => told.push(`${task.name} ${action}`), taken: () => {} });
    tasks.add(
      { id: "t1", name: "idle", agent: undefined, parentId: undefined },
      () => {},
      () => 0,
    );
    tasks.attach("t1", worker);
    // Its prompt has not gone yet: nothing runs that an interrupt could end.
    await expect(tasks.interrupt("idle")).rejects.toThrow(TaskNotRunningError);
    // Its answer is in: the turn is over.
    expect((await worker.run("answer")).text).toBe("answered");
    await expect(tasks.interrupt("idle")).rejects.toThrow(TaskNotRunningError);
    expect(told).toEqual([]);
  });
});
