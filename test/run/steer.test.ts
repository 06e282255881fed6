// Reaching one task of a running swarm from the library (the run handle's send, stopTask and interrupt) while the others go on,
// on the real claude CLI against the rehearsal server: a message mid-turn, a stop, its dependent skipped, --resume running it again;
// and a workflow script's agent() call stopped while it waits for a slot.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { loadSwarmConfigOrThrow, type RunEvent, runSwarmFile, runWorkflow, type SwarmRun, TaskNotRunningError } from "../../src/index.ts";
import { planResume } from "../../src/run/index.ts";
import { it } from "../support/fixtures.ts";
import { bothAgentsBusy, releaseSteerMe, steeredWorkflow, steeringSwarm } from "../support/steering.ts";

describe("steering one task of a running swarm", () => {
  it("sends a message into one agent's turn and stops another while the run finishes; --resume runs the stopped one again", async ({ tmp }) => {
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, steeringSwarm(tmp, { dependent: true }));
    const outDir = join(tmp, "out");
    let run: SwarmRun | undefined;
    const events: RunEvent[] = [];
    const running = runSwarmFile(file, { outDir, rehearse: true, onStart: (started) => (run = started), onEvent: (event) => events.push(event) });
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
    expect(run?.runningTasks.sort()).toEqual(["steer-me", "stop-me"]);
    await run?.send("steer-me", "look at B instead", { from: "the test" });
    await releaseSteerMe(tmp);
    const stoppedAt = Date.now();
    await run?.stopTask("stop-me", { from: "the test" });
    await expect(run?.send("after-stop", "hello")).rejects.toThrow(TaskNotRunningError);

    const result = await running;
    const byName = new Map(result.summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to: look at B instead" });
    expect(byName.get("stop-me")).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the test" } });
    expect(byName.get("after-stop")?.status).toBe("skipped");
    expect(byName.get("after-stop")?.error?.message).toContain("stop-me");
    // Ended within seconds, not after its 60 s tool.
    const stopMe = events.find((event) => event.type === "task_finished" && event.task.name === "stop-me");
    expect(stopMe?.type === "task_finished" && stopMe.result.finishedAt - stoppedAt).toBeLessThan(10_000);
    const steered = events.flatMap((event) => (event.type === "task_steered" ? [[event.task.name, event.action, event.from, event.text]] : []));
    expect(steered).toEqual([
      ["steer-me", "send", "the test", "look at B instead"],
      ["stop-me", "stop", "the test", undefined],
    ]);
    // The record keeps who sent what to which task, and when.
    const recorded = (summary: typeof result.summary) => summary.steering?.map((entry) => [entry.task, entry.action, entry.from, entry.text]);
    expect(recorded(result.summary)).toEqual(steered);
    expect(result.summary.steering?.every((entry) => Date.parse(entry.at) >= stoppedAt - 5_000)).toBe(true);
    expect(result.exitCode).toBe(1);
    // The run is over: nothing to reach.
    await expect(run?.stopTask("steer-me")).rejects.toThrow(TaskNotRunningError);

    const config = await loadSwarmConfigOrThrow(file);
    const resume = await planResume(config, { dir: outDir, runsDir: outDir, fresh: false });
    const again = await runSwarmFile(config, { outDir, rehearse: true, resume });
    expect(again.exitCode).toBe(0);
    expect(again.summary.tasks.map((task) => [task.name, task.status])).toEqual([
      ["steer-me", "succeeded"],
      ["stop-me", "succeeded"],
      ["after-stop", "succeeded"],
    ]);
    // …and a resumed attempt keeps the earlier attempts' steering.
    expect(recorded(again.summary)).toEqual(steered);
  });

  it("interrupts one agent's turn: the task ends interrupted, its session kept", async ({ tmp }) => {
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, steeringSwarm(tmp, { dependent: false }));
    let run: SwarmRun | undefined;
    const running = runSwarmFile(file, { outDir: join(tmp, "out"), rehearse: true, onStart: (started) => (run = started) });
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
    const asked = Date.now();
    await run?.interrupt("steer-me");
    await run?.stopTask("stop-me");
    const { summary } = await running;
    const steerMe = summary.tasks.find((task) => task.name === "steer-me");
    expect(steerMe).toMatchObject({ status: "cancelled", error: { code: "INTERRUPTED" } });
    expect(steerMe?.session_id).toMatch(/^[0-9a-f-]{36}$/);
    // Not after its tool's minute.
    expect(Date.now() - asked).toBeLessThan(20_000);
  });

  it("reaches a workflow script's agent() calls by their row names: a stopped call gives the script null", async ({ tmp }) => {
    const summary = await steeredWorkflow({ outDir: join(tmp, "out"), cwd: tmp });
    expect(summary.result).toEqual(["turned to: look at B instead", null]);
  });
  it("stops a workflow script's agent() call that waits for a slot: it never starts, and the script gets null", async ({ tmp }) => {
    const script = [
      'export const meta = { name: "one-slot", description: "two calls, one slot" }',
      'return await parallel([() => agent("work", { label: "hold" }), () => agent("wait", { label: "queued" })])',
    ].join("\n");
    let run: SwarmRun | undefined;
    const started = new Set<string>();
    const queued = new Set<string>();
    const running = runWorkflow(script, {
      outDir: join(tmp, "out"),
      cwd: tmp,
      concurrency: 1,
      rehearsal: { hold: [{ text: "held", delay_ms: 5_000 }], queued: [{ text: "queued ran" }] },
      onStart: (handle) => (run = handle),
      onEvent: (event) => {
        if (event.type === "task_started") started.add(event.task.name);
        if (event.type === "task_queued") queued.add(event.task.name);
      },
    });
    // The script hands its second call to the run a moment after its first: both are there once this one is queued.
    await expect.poll(() => started.has("hold") && queued.has("queued"), { timeout: 60_000 }).toBe(true);
    await expect(run?.send("queued", "hello")).rejects.toThrow(/waits for a slot/);
    await run?.stopTask("queued", { from: "the test" });
    const { summary } = await running;
    expect(summary.result).toEqual(["held", null]);
    expect(started.has("queued")).toBe(false);
    expect(summary.tasks.find((task) => task.name === "queued")).toMatchObject({ status: "cancelled", error: { code: "STOPPED" } });
  });
});
