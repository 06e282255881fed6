// Stopping a task that waits for a slot, on the real claude CLI against the scripted model: it ends cancelled without a process, and
// never reaches the model, while the task in the slot goes on; a message to it says it waits for a slot.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { type OrchestratorEvent, TaskNotRunningError } from "../../src/orchestrator/index.ts";
import { it } from "../support/fixtures.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";

describe("stopping a task that waits for a slot", () => {
  it("ends it cancelled without starting it, while the task in the slot finishes", { timeout: 90_000 }, async ({ tmp }) => {
    const busy = join(tmp, "busy");
    const server = await createRehearsal({
      first: [{ tool_use: { name: "Bash", input: { command: `touch ${busy} && sleep 5`, description: "work" } } }, { text: "first done" }],
      second: [{ text: "second should never run" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 1, defaults: { allowedTools: ["Bash"] } });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((event) => events.push(event));
    const first = orchestrator.run({ name: "first", prompt: "work a while" });
    const second = orchestrator.run({ name: "second", prompt: "wait your turn" });
    await expect.poll(() => existsSync(busy), { timeout: 60_000 }).toBe(true);

    expect(orchestrator.runningTaskNames).toEqual(["first"]);
    expect(() => orchestrator.sendToTask("second", "hello")).toThrow(TaskNotRunningError);
    expect(() => orchestrator.sendToTask("second", "hello")).toThrow(/task "second" waits for a slot/);
    await expect(orchestrator.interruptTask("second")).rejects.toThrow(/waits for a slot/);
    orchestrator.stopTask("second", { from: "the test" });
    const stopped = await second;
    expect(stopped).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the test" } });
    // Ended at once, while the first still works in its slot.
    expect(orchestrator.runningTaskNames).toEqual(["first"]);
    expect(() => orchestrator.stopTask("second")).toThrow(TaskNotRunningError);

    expect(await first).toMatchObject({ status: "succeeded", text: "first done" });
    expect(requestsOf(server.requests, "second")).toHaveLength(0);
    expect(events.some((event) => event.type === "task_started" && event.task.name === "second")).toBe(false);
    const steered = events.flatMap((event) => (event.type === "task_steered" ? [[event.task.name, event.action, event.from]] : []));
    expect(steered).toEqual([["second", "stop", "the test"]]);
  });
});
