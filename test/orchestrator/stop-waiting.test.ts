// Stopping a task that waits for a slot, on the real claude CLI against the scripted model: it ends cancelled without a process, and
// never reaches the model, while the task in the slot goes on; a message to it says it waits for a slot. Also one of a fan-out
// held back before the scheduler (Admission).
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { type OrchestratorEvent, TaskNotRunningError, type TaskResult } from "../../src/orchestrator/index.ts";
import { it } from "../support/fixtures.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";

/** A script that sits in a Bash call (touching `busy` as it starts) until the test writes `release`, then answers. */
function holdingTheSlot(tmp: string, answer: string) {
  const busy = join(tmp, "busy");
  const released = join(tmp, "release");
  const command = `touch ${busy}; until test -e ${released}; do sleep 0.2; done`;
  return {
    script: [{ tool_use: { name: "Bash", input: { command, description: "work" } } }, { text: answer }],
    busy: () => existsSync(busy),
    release: () => writeFile(released, ""),
  };
}

describe("stopping a task that waits for a slot", () => {
  it("ends it cancelled without starting it, while the task in the slot finishes", { timeout: 90_000 }, async ({ tmp }) => {
    const holding = holdingTheSlot(tmp, "first done");
    const server = await createRehearsal({ first: holding.script, second: [{ text: "second should never run" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 1, defaults: { allowedTools: ["Bash"] } });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((event) => events.push(event));
    const first = orchestrator.run({ name: "first", prompt: "work a while" });
    const second = orchestrator.run({ name: "second", prompt: "wait your turn" });
    await expect.poll(holding.busy, { timeout: 60_000 }).toBe(true);

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

    await holding.release();
    expect(await first).toMatchObject({ status: "succeeded", text: "first done" });
    expect(requestsOf(server.requests, "second")).toHaveLength(0);
    expect(events.some((event) => event.type === "task_started" && event.task.name === "second")).toBe(false);
    const steered = events.flatMap((event) => (event.type === "task_steered" ? [[event.task.name, event.action, event.from]] : []));
    expect(steered).toEqual([["second", "stop", "the test"]]);
  });

  it("ends one of a fan-out held back before the scheduler at once, the others still waiting", { timeout: 90_000 }, async ({ tmp }) => {
    const holding = holdingTheSlot(tmp, "first done");
    const server = await createRehearsal({ first: holding.script, echo: [{ text: "echo" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 1,
      defaults: { allowedTools: ["Bash"] },
      script: (context) => (context.name === "first" ? "first" : "echo"),
    });
    const rest = new AbortController();
    const first = orchestrator.run({ name: "first", prompt: "work a while" });
    // Past 64 waiting in the scheduler (a lane's least), the last ones wait as small entries (Admission).
    const waiting = Array.from({ length: 66 }, (_, i) => orchestrator.run({ name: `t${i}`, prompt: `item ${i}`, signal: rest.signal }));
    const settled = new Set<string>();
    for (const task of waiting) void task.then((result: TaskResult) => settled.add(result.name));
    await expect.poll(holding.busy, { timeout: 60_000 }).toBe(true);

    orchestrator.stopTask("t65", { from: "the test" });
    expect(await waiting[65]).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the test" } });
    expect([...settled]).toEqual(["t65"]);

    rest.abort();
    await holding.release();
    expect(await first).toMatchObject({ status: "succeeded" });
    expect((await Promise.all(waiting)).every((result) => result.status === "cancelled")).toBe(true);
    expect(requestsOf(server.requests, "echo")).toHaveLength(0);
  });
});
