// `cadre send | stop | interrupt` reach a task of a `cadre run --redis` on the `cadre worker` host that runs it: through the
// run's control socket to its coordinator, through Redis to that host, on the real claude CLI and each host's scripted model.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre, readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis } from "../support/distributed.ts";
import { it } from "../support/fixtures.ts";
import { claudeDescendants, processesMentioning } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { bothAgentsBusy, steeringSwarm } from "../support/steering.ts";

describe("steering a run on Redis hosts", () => {
  it("cadre send reaches an agent on its host and cadre stop ends another there while the run finishes; --resume runs it again", async ({ tmp }) => {
    const redis = await startRedis();
    // Under --rehearse each host plays the config's scripts; this server only has to exist.
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    const host = await startHost(redis, model, { name: "steer-host", script: "unused", concurrency: 3 });
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, steeringSwarm(tmp, { steerSeconds: 10, dependent: true }));
    const out = join(tmp, "out");
    const running = runDistributed(file, redis, out, ["--rehearse"]);
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);

    const notRunning = await cadre(["interrupt", out, "after-stop"]);
    expect(notRunning.exitCode).toBe(2);
    expect(notRunning.stderr).toMatch(/^cadre interrupt: task "after-stop" is not running \(running: (steer-me, stop-me|stop-me, steer-me)\)$/);
    const sent = await cadre(["send", out, "steer-me", "look at B instead"]);
    expect([sent.exitCode, sent.stdout, sent.stderr]).toEqual([0, "cadre send: sent to steer-me", ""]);
    const stoppedAt = Date.now();
    const stopped = await cadre(["stop", out, "stop-me"]);
    expect([stopped.exitCode, stopped.stdout, stopped.stderr]).toEqual([0, "cadre stop: stopped stop-me", ""]);
    // Said once, by the host that did it.
    await host.waitFor(/stop for stop-me from cadre stop: done/);

    const run = await running;
    expect(run.exitCode, run.stderr + run.stdout).toBe(1);
    const summary = await readSummary(out);
    const byName = new Map(summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to: look at B instead", host: "steer-host" });
    expect(byName.get("stop-me")).toMatchObject({
      status: "cancelled",
      error: { code: "STOPPED", message: "stopped by cadre stop" },
      host: "steer-host",
    });
    // Ended within seconds, not after its 60 s tool.
    expect(Date.parse(byName.get("stop-me")!.finished_at!) - stoppedAt).toBeLessThan(10_000);
    expect(byName.get("after-stop")?.status).toBe("skipped");
    expect(byName.get("after-stop")?.error?.message).toContain("stop-me");
    const steered = [
      ["steer-me", "send", "cadre send", "look at B instead"],
      ["stop-me", "stop", "cadre stop", undefined],
    ];
    const recorded = (record: typeof summary) => record.steering?.map((entry) => [entry.task, entry.action, entry.from, entry.text]);
    expect(recorded(summary)).toEqual(steered);
    // Nothing left running: no claude on the host, no tool of the agents anywhere, no key of the run in Redis.
    await host.waitFor(/run \S+: ended/);
    expect(await claudeDescendants(host.process.pid!)).toEqual([]);
    expect(await processesMentioning(tmp)).toEqual([]);
    expect(await redis.client.keys("cadre:run*")).toEqual([]);

    const again = await cadre(["run", file, "--redis", redis.url, "--rehearse", "--resume", out]);
    expect(again.exitCode, again.stderr + again.stdout).toBe(0);
    const resumed = await readSummary(out);
    expect(resumed.tasks.map((task) => [task.name, task.status])).toEqual([
      ["steer-me", "succeeded"],
      ["stop-me", "succeeded"],
      ["after-stop", "succeeded"],
    ]);
    expect(recorded(resumed)).toEqual(steered);
  }, 180_000);
});
