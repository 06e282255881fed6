// `cadre send | stop | interrupt` reach a task of a `cadre run --redis` on the `cadre worker` host that runs it: through the
// run's control socket to its coordinator, through Redis to that host, on the real claude CLI and each host's scripted model.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre, readSummary } from "../support/cli.ts";
import { type HostProcess, type RedisServer, runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { it } from "../support/fixtures.ts";
import { claudeDescendants, processesMentioning } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { bothAgentsBusy, releaseSteerMe, steeringSwarm } from "../support/steering.ts";

type Summary = Awaited<ReturnType<typeof readSummary>>;

/** A `cadre run --redis --rehearse` of steeringSwarm on one `cadre worker` host, once both its agents are in their Bash calls. */
async function steeredFleet(tmp: string) {
  const redis = await startRedis();
  // Under --rehearse each host plays the config's scripts; this server only has to exist.
  const model = await createRehearsal({ unused: [{ text: "unused" }] });
  const host = await startHost(redis, model, { name: "steer-host", script: "unused", concurrency: 3 });
  const file = join(tmp, "swarm.yaml");
  await writeFile(file, steeringSwarm(tmp, { dependent: true }));
  const out = join(tmp, "out");
  const running = runDistributed(file, redis, out, ["--rehearse"]);
  await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
  return { redis, host, file, out, running };
}

/** Once the run has ended: no claude on the host, no tool of the agents anywhere, no key of the run in Redis. */
async function nothingLeft(tmp: string, redis: RedisServer, host: HostProcess): Promise<void> {
  await host.waitFor(/run \S+: ended/);
  expect(await claudeDescendants(host.process.pid!)).toEqual([]);
  expect(await processesMentioning(tmp)).toEqual([]);
  expect(await redis.client.keys("cadre:run*")).toEqual([]);
}

const recorded = (record: Summary) => record.steering?.map((entry) => [entry.task, entry.action, entry.from, entry.text]);

describe("steering a run on Redis hosts", () => {
  it("cadre send reaches an agent on its host and cadre stop ends another there while the run finishes; --resume runs it again", async ({ tmp }) => {
    const { redis, host, file, out, running } = await steeredFleet(tmp);
    // The host said, as it took its jobs, that it answers steering requests: a host of an older cadre does not.
    const [steerHosts] = await redis.client.keys("cadre:run:*:steer-hosts");
    expect(await redis.client.smembers(steerHosts!)).toEqual(["steer-host"]);

    const notRunning = await cadre(["interrupt", out, "after-stop"]);
    expect(notRunning.exitCode).toBe(2);
    expect(notRunning.stderr).toMatch(/^cadre interrupt: task "after-stop" is not running \(running: (steer-me, stop-me|stop-me, steer-me)\)$/);
    const sent = await cadre(["send", out, "steer-me", "look at B instead"]);
    expect([sent.exitCode, sent.stdout, sent.stderr]).toEqual([0, "cadre send: sent to steer-me", ""]);
    await releaseSteerMe(tmp);
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
    expect(recorded(summary)).toEqual(steered);
    await nothingLeft(tmp, redis, host);

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

  it("cadre interrupt ends an agent's turn on its host, in a long Bash call: the task ends interrupted, and --resume goes on in its session there", async () => {
    const redis = await startRedis();
    // Without --rehearse: the host's own HOME keeps the CLI's session files from one run to the next, as a real host's does.
    const model = await createRehearsal({
      shell: [{ tool_use: { name: "Bash", input: { command: "{{prompt}}", description: "run it" } } }, { text: "done: {{tool_result}}" }],
    });
    const host = await startHost(redis, model, { name: "steer-host", script: "shell" });
    const dir = await tempHome("cadre-interrupt-");
    const [ranOnce, busy] = [join(dir, "ran-once"), join(dir, "busy")];
    const file = await swarmFile([
      "name: interrupting",
      "defaults: { allowed_tools: [Bash] }",
      "tasks:",
      // A minute in Bash the first time; at once when --resume runs it again.
      `  - { name: long, prompt: 'test -e ${ranOnce} || { touch ${ranOnce} ${busy}; sleep 60; }; echo LONG' }`,
      "  - { name: after, prompt: 'echo AFTER', depends_on: [long] }",
    ]);
    const out = join(dir, "out");
    const running = runDistributed(file, redis, out);
    await expect.poll(() => existsSync(busy), { timeout: 60_000 }).toBe(true);

    const askedAt = Date.now();
    const interrupted = await cadre(["interrupt", out, "long"]);
    expect([interrupted.exitCode, interrupted.stdout, interrupted.stderr]).toEqual([0, "cadre interrupt: interrupted long", ""]);
    await host.waitFor(/interrupt for long from cadre interrupt: done/);
    const run = await running;
    expect(run.exitCode, run.stderr + run.stdout).toBe(1);
    const summary = await readSummary(out);
    const [long, after] = summary.tasks;
    expect(long).toMatchObject({ name: "long", status: "cancelled", error: { code: "INTERRUPTED" }, host: "steer-host" });
    expect(long?.session_id).toMatch(/^[0-9a-f-]{36}$/);
    // Ended within seconds, not after its minute in Bash.
    expect(Date.parse(long!.finished_at!) - askedAt).toBeLessThan(10_000);
    expect(after).toMatchObject({ name: "after", status: "skipped" });
    expect(recorded(summary)).toEqual([["long", "interrupt", "cadre interrupt", undefined]]);
    await nothingLeft(dir, redis, host);

    // The same host serves the resumed run: the interrupted task goes on in the session it had begun.
    const again = await cadre(["run", file, "--redis", redis.url, "--resume", out]);
    expect(again.exitCode, again.stderr + again.stdout).toBe(0);
    expect(again.stdout).toContain(`long: runs again, it was cancelled before; continuing session ${long?.session_id}`);
    expect(again.stdout).not.toContain("is not where it runs now");
    const resumed = await readSummary(out);
    expect(resumed.tasks.map((task) => [task.name, task.status, task.session_id === long?.session_id])).toEqual([
      ["long", "succeeded", true],
      ["after", "succeeded", false],
    ]);
  }, 180_000);
});
