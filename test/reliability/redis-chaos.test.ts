// The fleet's faults on a real redis-server: Redis that crashes and forgets, Redis paused past a
// job's lock, a host frozen past its lock, a coordinator killed and resumed. Each ends with every
// task recorded once, a line where something was lost, and no process left (startHost checks).
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { RecordedRequest, RehearsalServer } from "../../src/rehearsal/server.ts";
import { bin, readSummary, repo } from "../support/cli.ts";
import { type RedisServer, runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

/** A swarm of `count` independent tasks, "item 1" …, `concurrency` at once over the fleet. */
function itemsSwarm(name: string, count: number, concurrency: number): Promise<string> {
  const tasks = Array.from({ length: count }, (_, i) => `  - { name: t${i + 1}, prompt: item ${i + 1} }`);
  return swarmFile([`name: ${name}`, `concurrency: ${concurrency}`, "tasks:", ...tasks]);
}

/** The task prompt ("item N") a model request was for. */
function itemOf(request: RecordedRequest): string | undefined {
  return /item \d+/.exec(JSON.stringify(request.messages))?.[0];
}

/** How often the model played each task's turn to its end. */
function playsPerItem(model: RehearsalServer): Map<string, number> {
  const plays = new Map<string, number>();
  for (const request of model.requests.filter((r) => r.outcome === "played")) {
    const item = itemOf(request);
    if (item) plays.set(item, (plays.get(item) ?? 0) + 1);
  }
  return plays;
}

/** `--json` output: how many task_finished events each config task had (the run announces each end once). */
function endsPerTask(stdout: string): Map<string, number> {
  const ends = new Map<string, number>();
  for (const line of stdout.split("\n").filter(Boolean)) {
    const event = JSON.parse(line) as { type: string; task?: { name: string; parentId?: string } };
    if (event.type === "task_finished" && event.task && event.task.parentId === undefined)
      ends.set(event.task.name, (ends.get(event.task.name) ?? 0) + 1);
  }
  return ends;
}

/**
 * Waits until no key of a run is left in Redis, and fails with those left after 30 s. Not at once: a host lets go of
 * an ended run when the coordinator's poke reaches it, and removes what its queue's worker wrote meanwhile.
 */
async function expectNoRunKeysLeft(redis: RedisServer): Promise<void> {
  let left: string[] = [];
  const gone = await until(
    async () => {
      left = (await redis.client.keys("cadre:run*")).sort();
      return left.length === 0 ? true : undefined;
    },
    30_000,
    "the run's keys gone from Redis",
  ).catch(() => false);
  expect(gone ? [] : left).toEqual([]);
}

const ALL_SUCCEEDED = (count: number) => Array.from({ length: count }, (_, i) => [`t${i + 1}`, "succeeded", `done item ${i + 1}`]);

describe("chaos: the fleet's faults on a real Redis", () => {
  for (const appendOnly of [false, true]) {
    it(`Redis killed and started again ${appendOnly ? "with its append-only file: nothing is lost" : "empty: the run is made again and ends"}`, async () => {
      const redis = await startRedis({ appendOnly });
      const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 6_000 }] });
      const hosts = [
        await startHost(redis, model, { name: "a", script: "fleet", concurrency: 2 }),
        await startHost(redis, model, { name: "b", script: "fleet", concurrency: 2 }),
      ];
      const file = await itemsSwarm("forgetful", 8, 4);
      const out = join(await tempHome("cadre-out-"), "run");
      const run = runDistributed(file, redis, out, ["--json"]);
      // Some tasks under way, the others waiting for a slot (on a busy machine the CLIs start at their own pace).
      await until(() => (model.inFlight >= 2 ? true : undefined), 120_000, "two tasks under way");
      await redis.kill();
      // Down while the turns under way end (no host can take another): their results wait for Redis.
      await until(() => (model.inFlight === 0 ? true : undefined), 60_000, "the turns under way ended");
      await redis.restart();
      const back = Date.now();
      const done = await run;
      expect(Date.now() - back, "the run ends within 60 s of Redis coming back").toBeLessThan(60_000);
      expect(done.exitCode, done.stderr).toBe(0);

      const summary = await readSummary(out);
      expect(summary.tasks.map((task) => [task.name, task.status, task.text])).toEqual(ALL_SUCCEEDED(8));
      expect([...endsPerTask(done.stdout).values()]).toEqual(Array(8).fill(1));
      const lost = done.stderr.split("\n").filter((line) => line.includes("Redis lost run"));
      if (appendOnly) {
        expect(lost).toEqual([]);
        // Nothing ran twice.
        expect([...playsPerItem(model).values()]).toEqual(Array(8).fill(1));
      } else {
        expect(lost).toHaveLength(1);
        expect(lost[0]).toMatch(
          /^cadre run: Redis lost run \S+ \(restarted empty, flushed or evicted\?\): made it again; \d tasks? queued again(, \d tasks? under way given 30 s to report)?$/,
        );
        // A host found the run's keys gone and served on (which host looks while they are gone is the machine's timing);
        // none called the run ended while its coordinator went on: every task succeeded, once.
        expect(hosts.map((host) => host.output()).join("\n")).toMatch(/its keys are gone from Redis/);
      }
      await expectNoRunKeysLeft(redis);
    }, 300_000);
  }

  it("Redis paused longer than a job's lock: every task still ends once, with one result", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 3_000 }] });
    const hosts = [
      await startHost(redis, model, { name: "a", script: "fleet", stallS: 2 }),
      await startHost(redis, model, { name: "b", script: "fleet", stallS: 2 }),
    ];
    const file = await itemsSwarm("paused", 3, 2);
    const out = join(await tempHome("cadre-out-"), "run");
    const run = runDistributed(file, redis, out, ["--json"]);
    await until(() => (model.inFlight > 0 ? true : undefined), 120_000, "a task under way");
    await redis.client.call("CLIENT", "PAUSE", "5000", "ALL");
    const done = await run;
    expect(done.exitCode, done.stderr).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((task) => [task.name, task.status, task.text])).toEqual(ALL_SUCCEEDED(3));
    expect([...endsPerTask(done.stdout).values()]).toEqual([1, 1, 1]);
    // A task whose lock ran out in the pause ran again: its first host said its late result does not count.
    const lateLines = hosts.flatMap((host) => host.output().split("\n")).filter((line) => line.includes("too late"));
    const ranTwice = [...playsPerItem(model).values()].filter((plays) => plays > 1).length;
    expect(ranTwice, "the pause outlasted the locks").toBeGreaterThan(0);
    expect(lateLines.length).toBe(ranTwice);
    await expectNoRunKeysLeft(redis);
  }, 240_000);

  it("a host frozen past its lock and resumed: its late result neither counts twice nor replaces the retry's", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({
      // Long enough for the freeze to come first: the answer waits in the socket until the host thaws.
      frozen: [{ text: "from the frozen host", delay_ms: 5_000 }],
      live: [{ text: "done {{prompt}}", delay_ms: 4_000 }],
    });
    const frozen = await startHost(redis, model, { name: "frozen", script: "frozen", stallS: 2 });
    const file = await itemsSwarm("frozen", 1, 1);
    const out = join(await tempHome("cadre-out-"), "run");
    const run = runDistributed(file, redis, out, ["--json"]);
    await until(() => (model.requests.some((r) => r.script === "frozen") ? true : undefined), 90_000, "the task under way on the first host");
    // The whole machine stops: the host and its claude.
    process.kill(-frozen.process.pid!, "SIGSTOP");
    const live = await startHost(redis, model, { name: "live", script: "live", stallS: 2 });
    await live.waitFor(/t1 starts \(attempt 2\)/, 60_000);
    process.kill(-frozen.process.pid!, "SIGCONT");
    await frozen.waitFor(/t1 succeeded too late: its lock passed to another attempt, whose result counts/, 60_000);
    const done = await run;
    expect(done.exitCode, done.stderr).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((task) => [task.name, task.status, task.text, task.host, task.attempts])).toEqual([
      ["t1", "succeeded", "done item 1", "live", 2],
    ]);
    expect([...endsPerTask(done.stdout).values()]).toEqual([1]);
    await expectNoRunKeysLeft(redis);
  }, 240_000);

  it("the coordinator killed: the hosts finish, and --resume collects their results with one run id, running nothing twice", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 3_000 }] });
    const host = await startHost(redis, model, { name: "h", script: "fleet", concurrency: 3 });
    const file = await itemsSwarm("orphaned", 4, 2);
    const out = join(await tempHome("cadre-out-"), "run");
    const first = runDistributed(file, redis, out);
    await until(() => (model.requests.length > 0 ? true : undefined), 120_000, "a task under way");
    // The record is written from the start: its run id is the one the hosts serve.
    const runId = (await readSummary(out)).run_id;
    expect(await redis.client.sismember("cadre:runs", runId)).toBe(1);
    first.kill("SIGKILL");
    await first;
    // Without a coordinator the hosts go on: the queue is in Redis.
    for (const name of ["t1", "t2", "t3", "t4"]) await host.waitFor(new RegExp(`${name} succeeded`), 120_000);
    const before = await readSummary(out);
    expect(before.run_id).toBe(runId);
    expect(before.complete).toBe(false);

    const resumed = await execa("node", [bin, "run", file, "--redis", redis.url, "--resume", out], { cwd: repo, reject: false });
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    expect(resumed.stdout).toContain(`run id ${runId}, picked up where it was`);
    const summary = await readSummary(out);
    expect(summary.run_id).toBe(runId);
    expect(summary.tasks.map((task) => [task.name, task.status, task.text])).toEqual(ALL_SUCCEEDED(4));
    // The model server's count: each task's turn was played once, before the coordinator died or after.
    expect([...playsPerItem(model).values()]).toEqual([1, 1, 1, 1]);
    // Two of the four waited for a slot of the fleet (concurrency 2) while two ran for 3 s (on a
    // busy machine the first two may also wait a while for the host to take them).
    const queued = summary.tasks.map((task) => task.queued_ms).sort((a, b) => a - b);
    expect(
      queued.slice(2).every((ms) => ms >= 2_000),
      `queued ms ${queued}`,
    ).toBe(true);
    await expectNoRunKeysLeft(redis);
  }, 300_000);
});
