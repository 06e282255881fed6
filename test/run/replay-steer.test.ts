// Replaying a steered run (`cadre replay`, and the library) on the real claude CLI against its recorded replies: each recorded message reaches its task at the
// step it did, each stop and interrupt ends its task as it did, with no divergence; for a swarm file and a workflow script.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { replaySwarmFile, replayWorkflow, runSwarmFile, type Summary, type SwarmRun } from "../../src/index.ts";
import { cadre, readSummary } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { bothAgentsBusy, releaseSteerMe, steeredWorkflow, steeringSwarm } from "../support/steering.ts";

/**
 * The steering a record lists, by task (each task's in its order), without its times: the replay's own is at other
 * times, and tasks reach their steps side by side, so two tasks' actions may be listed in either order.
 */
const steeringOf = (summary: Summary) =>
  summary.steering?.map(({ at: _, ...entry }) => entry).sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));

/** The swarm file again in `dir`, without its rehearsal scripts: whatever the replay's model says comes from the record. */
async function checkout(dir: string, source: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const text = await readFile(source, "utf8");
  const file = join(dir, "swarm.yaml");
  await writeFile(file, text.slice(0, text.indexOf("\nrehearsal:")));
  return file;
}

/**
 * Runs steeringSwarm with `steer` done once both agents sit in their Bash calls and cadre has read the replies that called
 * them (a step counts the replies cadre has read: a busy machine may run the tool before cadre reads its call); resolves
 * with the run's record.
 */
async function steeredRun(tmp: string, steer: (run: SwarmRun) => Promise<void>): Promise<Summary> {
  const file = join(tmp, "swarm.yaml");
  await writeFile(file, steeringSwarm(tmp, { dependent: true, waitEveryTime: true }));
  let run: SwarmRun | undefined;
  const replied = new Set<string>();
  const running = runSwarmFile(file, {
    outDir: join(tmp, "recorded"),
    rehearse: true,
    onStart: (started) => (run = started),
    onEvent: (event) => {
      if (event.type === "task_message" && event.message.type === "assistant") replied.add(event.task.name);
    },
  });
  await expect.poll(() => bothAgentsBusy(tmp) && replied.has("steer-me") && replied.has("stop-me"), { timeout: 60_000 }).toBe(true);
  await steer(run!);
  return (await running).summary;
}

describe("replay of a steered run", () => {
  it("sends the recorded message at the step it reached its agent, and stops the stopped task again", { timeout: 180_000 }, async ({ tmp }) => {
    const recorded = await steeredRun(tmp, async (run) => {
      await run.send("steer-me", "look at B instead", { from: "the test" });
      await run.stopTask("stop-me", { from: "the test" });
      await releaseSteerMe(tmp);
    });
    // Both were done while the agents ran the tool of their first reply: the message was taken in at step 1.
    expect(steeringOf(recorded)).toEqual([
      { task: "steer-me", action: "send", from: "the test", text: "look at B instead", step: 1 },
      { task: "stop-me", action: "stop", from: "the test", step: 1 },
    ]);

    // As a user replays it: the command.
    const config = await checkout(join(tmp, "checkout"), join(tmp, "swarm.yaml"));
    const replayed = await cadre(["replay", join(tmp, "recorded"), "--config", config, "--out", join(tmp, "replay")]);
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toContain("steer-me: “turned to: look at B instead”");
    const replay = { summary: await readSummary(join(tmp, "replay")), exitCode: replayed.exitCode };
    expect(replay.summary.replay?.divergences).toEqual([]);
    const rows = (summary: Summary) => summary.tasks.map((task) => [task.name, task.status, task.text, task.error?.code, task.error?.message]);
    expect(rows(replay.summary)).toEqual(rows(recorded));
    const byName = new Map(replay.summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to: look at B instead" });
    expect(byName.get("stop-me")).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the test" } });
    expect(byName.get("after-stop")?.status).toBe("skipped");
    // The replay's record lists the steering it did again, at the same steps.
    expect(steeringOf(replay.summary)).toEqual(steeringOf(recorded));
    expect(replay.exitCode).toBe(1);
  });

  it("interrupts the interrupted task's turn again", { timeout: 180_000 }, async ({ tmp }) => {
    const recorded = await steeredRun(tmp, async (run) => {
      await run.interrupt("steer-me");
      await run.stopTask("stop-me");
    });
    expect(steeringOf(recorded)?.map((entry) => [entry.task, entry.action, entry.step])).toEqual([
      ["steer-me", "interrupt", 1],
      ["stop-me", "stop", 1],
    ]);
    const started = Date.now();
    const replay = await replaySwarmFile(join(tmp, "recorded"), {
      config: await checkout(join(tmp, "checkout"), join(tmp, "swarm.yaml")),
      outDir: join(tmp, "replay"),
    });
    expect(replay.summary.replay?.divergences, replay.warnings.join("\n")).toEqual([]);
    expect(replay.summary.tasks.find((task) => task.name === "steer-me")).toMatchObject({ status: "cancelled", error: { code: "INTERRUPTED" } });
    // Interrupted in its tool, which waits a minute for a release that never comes.
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(steeringOf(replay.summary)).toEqual(steeringOf(recorded));
  });

  it("replays a workflow script's steered agent() calls: a message taken after the answer, a stopped call's null", { timeout: 180_000 }, async ({
    tmp,
  }) => {
    const work = join(tmp, "work");
    await mkdir(work);
    const recorded = await steeredWorkflow({ outDir: join(tmp, "recorded"), cwd: work });
    expect(recorded.result).toEqual(["turned to: look at B instead", null]);
    // Taken in after the first answer (step 1); stopped before any reply (step 0).
    expect(steeringOf(recorded)?.map((entry) => [entry.task, entry.action, entry.step])).toEqual([
      ["steer-me", "send", 1],
      ["stop-me", "stop", 0],
    ]);

    const checkoutDir = join(tmp, "checkout");
    await mkdir(checkoutDir);
    const replay = await replayWorkflow(join(tmp, "recorded"), { outDir: join(tmp, "replay"), cwd: checkoutDir });
    expect(replay.summary.replay?.divergences, replay.warnings.join("\n")).toEqual([]);
    expect(replay.summary.result).toEqual(["turned to: look at B instead", null]);
    expect(replay.summary.tasks.find((task) => task.name === "stop-me")).toMatchObject({ status: "cancelled", error: { code: "STOPPED" } });
    expect(steeringOf(replay.summary)).toEqual(steeringOf(recorded));
  });
});
