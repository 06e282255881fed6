// Reaching one task of a running swarm from the library (the run handle's send, stopTask and interrupt) while the others go on,
// on the real claude CLI against the rehearsal server: a message mid-turn, a stop, its dependent skipped, --resume running it again.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { loadSwarmConfigOrThrow, type RunEvent, runSwarmFile, type SwarmRun, TaskNotRunningError } from "../../src/index.ts";
import { planResume } from "../../src/run/index.ts";
import { it } from "../support/fixtures.ts";

/** Two agents in long Bash calls (each touches a file as its tool starts), and a task that waits on the second. */
function swarm(tmp: string): string {
  const marker = join(tmp, "stop-me-ran-once");
  return [
    "name: steering",
    "concurrency: 3",
    "defaults: { allowed_tools: [Bash] }",
    "tasks:",
    "  - { name: steer-me, prompt: list A }",
    "  - { name: stop-me, prompt: wait long }",
    "  - { name: after-stop, prompt: 'go on from {{results.stop-me}}', depends_on: [stop-me] }",
    "rehearsal:",
    "  steer-me:",
    `    - tool_use: { name: Bash, input: { command: 'touch ${join(tmp, "steer-me")} && sleep 3', description: list } }`,
    "    - text: turned to B",
    "  stop-me:",
    // Long the first time; at once when --resume runs it again.
    `    - tool_use: { name: Bash, input: { command: 'test -e ${marker} || { touch ${marker} ${join(tmp, "stop-me")}; sleep 60; }', description: wait } }`,
    "    - text: waited",
    "  after-stop: [{ text: 'after: {{prompt}}' }]",
  ].join("\n");
}

describe("steering one task of a running swarm", () => {
  it("sends a message into one agent's turn and stops another while the run finishes; --resume runs the stopped one again", async ({ tmp }) => {
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, `${swarm(tmp)}\n`);
    const outDir = join(tmp, "out");
    let run: SwarmRun | undefined;
    const events: RunEvent[] = [];
    const running = runSwarmFile(file, { outDir, rehearse: true, onStart: (started) => (run = started), onEvent: (event) => events.push(event) });
    await expect.poll(() => existsSync(join(tmp, "steer-me")) && existsSync(join(tmp, "stop-me")), { timeout: 60_000 }).toBe(true);
    expect(run?.runningTasks.sort()).toEqual(["steer-me", "stop-me"]);
    run?.send("steer-me", "look at B instead", { from: "the test" });
    const stoppedAt = Date.now();
    run?.stopTask("stop-me", { from: "the test" });
    expect(() => run?.send("after-stop", "hello")).toThrow(TaskNotRunningError);

    const result = await running;
    const byName = new Map(result.summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to B" });
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
    expect(result.exitCode).toBe(1);
    // The run is over: nothing to reach.
    expect(() => run?.stopTask("steer-me")).toThrow(TaskNotRunningError);

    const config = await loadSwarmConfigOrThrow(file);
    const resume = await planResume(config, { dir: outDir, runsDir: outDir, fresh: false });
    const again = await runSwarmFile(config, { outDir, rehearse: true, resume });
    expect(again.exitCode).toBe(0);
    expect(again.summary.tasks.map((task) => [task.name, task.status])).toEqual([
      ["steer-me", "succeeded"],
      ["stop-me", "succeeded"],
      ["after-stop", "succeeded"],
    ]);
  });
});
