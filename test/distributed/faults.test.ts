// Faults of a distributed run: a host that dies mid-task, a coordinator that restarts, Redis not there.
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { Coordinator } from "../../src/distributed/coordinator.ts";
import { Host } from "../../src/distributed/host.ts";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import type { RecordedRequest } from "../../src/rehearsal/server.ts";
import { bin, readSummary, repo } from "../support/cli.ts";
import { killHost, runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { claudeDescendants, isGone, liveClaudeChildren } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

/** The task prompt ("item N") a model request was for. */
function promptOf(request: RecordedRequest): string | undefined {
  return /item \d/.exec(JSON.stringify(request.messages))?.[0];
}

describe("distributed faults", () => {
  it("a host killed mid-task loses no task: another host takes it up, counted as a second attempt", async () => {
    const redis = await startRedis();
    const step = [{ text: "done {{prompt}}", delay_ms: 2_500 }];
    const model = await createRehearsal({ a: step, b: step });
    // Locks of 2 s: a dead host's task is taken up within a few seconds.
    const doomed = await startHost(redis, model, { name: "a", script: "a", stallS: 2 });
    await startHost(redis, model, { name: "b", script: "b", stallS: 2 });
    const file = await swarmFile(["name: faults", "concurrency: 2", "tasks:", ...[1, 2, 3, 4].map((i) => `  - { name: t${i}, prompt: item ${i} }`)]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = runDistributed(file, redis, out);
    // Host a's model call is under way: the machine dies, with its claude.
    await expect.poll(() => model.requests.some((r) => r.script === "a"), { timeout: 60_000, message: "host a's model request" }).toBe(true);
    const lost = model.requests.find((r) => r.script === "a")!;
    killHost(doomed);
    const done = await run;
    expect(done.exitCode, done.stderr + done.stdout).toBe(0);

    const summary = await readSummary(out);
    expect(summary.tasks.map((task) => [task.name, task.status, task.host, task.text])).toEqual(
      [1, 2, 3, 4].map((i) => [`t${i}`, "succeeded", "b", `done item ${i}`]),
    );
    const lostTask = summary.tasks.find((task) => promptOf(lost) === `item ${task.name.slice(1)}`)!;
    expect(lostTask.attempts).toBe(2);
    for (const task of summary.tasks.filter((t) => t !== lostTask)) expect(task.attempts).toBe(1);
    // Each task's turn was played once to its end on the surviving host.
    const played = model.requests.filter((r) => r.script === "b" && r.outcome === "played");
    expect(played.map(promptOf).sort()).toEqual(["item 1", "item 2", "item 3", "item 4"]);
  }, 120_000);

  it("a host stopped with SIGTERM finishes its task and takes no more; stopped twice, it hands its task back", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({
      a: [{ text: "done {{prompt}} on a", delay_ms: 2_500 }],
      slowA: [{ text: "done {{prompt}} on a", delay_ms: 30_000 }],
      b: [{ text: "done {{prompt}} on b", delay_ms: 300 }],
    });
    const file = await swarmFile(["name: stop", "concurrency: 2", "tasks:", ...[1, 2, 3].map((i) => `  - { name: t${i}, prompt: item ${i} }`)]);
    const home = await tempHome("cadre-out-");

    // Once: the task under way on a ends there; the rest go to b.
    const a = await startHost(redis, model, { name: "a", script: "a" });
    await startHost(redis, model, { name: "b", script: "b" });
    const graceful = runDistributed(file, redis, join(home, "graceful"));
    await expect.poll(() => model.requests.some((r) => r.script === "a"), { timeout: 60_000, message: "host a's model request" }).toBe(true);
    a.process.kill("SIGTERM");
    expect((await a.process).exitCode).toBe(0);
    expect((await graceful).exitCode).toBe(0);
    const once = await readSummary(join(home, "graceful"));
    expect(once.tasks.filter((task) => task.host === "a").map((task) => [task.status, task.text.endsWith("on a")])).toEqual([["succeeded", true]]);
    expect(once.tasks.filter((task) => task.host === "b")).toHaveLength(2);

    // Twice: the task under way on the slow host goes back to the queue, and b runs it.
    const slow = await startHost(redis, model, { name: "slow", script: "slowA" });
    const handedBack = runDistributed(file, redis, join(home, "handed-back"));
    await expect
      .poll(() => model.requests.some((r) => r.script === "slowA"), { timeout: 60_000, message: "the slow host's model request" })
      .toBe(true);
    const workers = await claudeDescendants(slow.process.pid!);
    slow.process.kill("SIGTERM");
    await slow.waitFor(/taking no new tasks/);
    slow.process.kill("SIGTERM");
    const stopped = await slow.process;
    expect([stopped.exitCode, stopped.signal], slow.output()).toEqual([130, undefined]);
    for (const pid of workers) expect(await isGone(pid), `claude ${pid} survived`).toBe(true);
    expect((await handedBack).exitCode).toBe(0);
    const twice = await readSummary(join(home, "handed-back"));
    expect(twice.tasks.map((task) => [task.status, task.host])).toEqual([
      ["succeeded", "b"],
      ["succeeded", "b"],
      ["succeeded", "b"],
    ]);
    expect(twice.tasks.map((task) => task.attempts).sort()).toEqual([1, 1, 2]);
  }, 180_000);

  it("a coordinator that restarts with the same run id picks up where it was", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 1_000 }] });
    const host = await startHost(redis, model, { name: "h", script: "fleet" });
    const file = await swarmFile([
      "name: restart",
      "concurrency: 1",
      "tasks:",
      "  - { name: t1, prompt: item 1 }",
      "  - { name: t2, prompt: item 2 }",
      "  - { name: t3, prompt: 'after {{results.t1}}', depends_on: [t1] }",
    ]);
    // Run where runs go by default (.cadre/runs/<time>/): the restarted coordinator finds the run's directory by its id.
    const home = await tempHome("cadre-out-");
    const run = () => execa("node", [bin, "run", file, "--redis", redis.url, "--run-id", "restart-1"], { cwd: home, reject: false });
    const first = run();
    await host.waitFor(/t1 succeeded/);
    first.kill("SIGKILL");
    await first;

    const second = await run();
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain("run id restart-1, picked up where it was");
    const dirs = await readdir(join(home, ".cadre", "runs"));
    expect(dirs).toHaveLength(1);
    const summary = await readSummary(join(home, ".cadre", "runs", dirs[0]!));
    expect(summary.run_id).toBe("restart-1");
    expect(summary.tasks.map((task) => [task.name, task.status, task.text])).toEqual([
      ["t1", "succeeded", "done item 1"],
      ["t2", "succeeded", "done item 2"],
      ["t3", "succeeded", "done after done item 1"],
    ]);
    // Nothing ran twice, and the transcripts of what ran before the restart are there too.
    expect(model.requests.filter((r) => r.outcome === "played")).toHaveLength(3);
    for (const task of summary.tasks) expect(task.transcript).toBe(`transcripts/${task.name}.jsonl`);
  }, 120_000);

  it("Ctrl-C on cadre run cancels the tasks on the hosts: their claude processes end, summary.json says cancelled", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ slow: [{ text: "too late", delay_ms: 30_000 }] });
    const host = await startHost(redis, model, { name: "h", script: "slow", concurrency: 2 });
    const file = await swarmFile(["name: stop", "concurrency: 2", "tasks:", ...[1, 2, 3].map((i) => `  - { name: t${i}, prompt: item ${i} }`)]);
    const out = join(await tempHome("cadre-out-"), "run");
    const run = runDistributed(file, redis, out);
    await expect.poll(() => model.inFlight === 2, { timeout: 60_000, message: "two model requests in flight" }).toBe(true);
    const workers = await claudeDescendants(host.process.pid!);
    expect(workers).toHaveLength(2);

    run.kill("SIGINT");
    const done = await run;
    expect(done.exitCode, done.stderr + done.stdout).toBe(130);
    for (const pid of workers) expect(await isGone(pid, 10_000), `claude ${pid} survived`).toBe(true);
    const summary = await readSummary(out);
    expect(summary.interrupted).toBe(true);
    expect(summary.tasks.map((task) => task.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    // The host goes on serving: it only stopped the run's tasks.
    await host.waitFor(/run \S+: ended/);
    expect(host.process.exitCode).toBeNull();
  }, 120_000);

  it("Redis not there: both commands say so in one line and exit 1, without hanging", async () => {
    // A port nobody listens on: a server started and stopped again.
    const redis = await startRedis();
    const url = redis.url;
    await redis.client.shutdown("NOSAVE").catch(() => undefined);
    const file = await swarmFile(["tasks:", "  - { name: t1, prompt: hi }"]);

    const worker = await execa("node", [bin, "worker", "--redis", url], { cwd: repo, reject: false, timeout: 30_000 });
    expect([worker.exitCode, worker.stderr]).toEqual([
      1,
      `cadre worker: cannot reach Redis at ${url}: connect ECONNREFUSED ${url.slice(8)}; is redis-server running there?`,
    ]);
    const run = await runDistributed(file, { ...redis, url }, join(await tempHome("cadre-out-"), "run"));
    expect([run.exitCode, run.stderr]).toEqual([
      1,
      `cadre run: cannot reach Redis at ${url}: connect ECONNREFUSED ${url.slice(8)}; is redis-server running there?`,
    ]);

    const bad = await execa("node", [bin, "worker", "--redis", "http://127.0.0.1:1"], { cwd: repo, reject: false });
    expect([bad.exitCode, bad.stderr]).toEqual([
      2,
      "cadre worker: http://127.0.0.1:1 is not a Redis URL; it must start with redis:// or rediss://; usage: cadre worker --redis URL [--concurrency N] [--name NAME] [--stall-s S] [--otel [--otel-content]] [--metrics HOST:PORT]",
    ]);
  }, 60_000);

  it("Redis that may evict keys: both commands say so in one line at start, and serve", async () => {
    const redis = await startRedis();
    await redis.client.config("SET", "maxmemory-policy", "allkeys-lru");
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}" }] });
    const host = await startHost(redis, model, { name: "h", script: "fleet" });
    const warning = `Redis at ${redis.url} has maxmemory-policy allkeys-lru: it may drop a run's jobs when full; set it to noeviction (redis-cli CONFIG SET maxmemory-policy noeviction)`;
    expect(host.output()).toContain(`warning: ${warning}`);
    const file = await swarmFile(["tasks:", "  - { name: t1, prompt: item 1 }"]);
    const run = await runDistributed(file, redis, join(await tempHome("cadre-out-"), "run"));
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr.split("\n").filter((line) => line.includes("maxmemory-policy"))).toEqual([`cadre run: warning: ${warning}`]);
  }, 60_000);

  it("Redis lost mid-run: the running task fails with REDIS_UNREACHABLE; the host ends its workers and keeps reconnecting", async () => {
    const redis = await startRedis();
    const lossMs = 1_500;
    const lines: string[] = [];
    const host = await Host.start({
      redisUrl: redis.url,
      name: "h",
      concurrency: 1,
      stallMs: 30_000,
      log: (line) => lines.push(line),
      redisLossMs: lossMs,
    });
    const coordinator = await Coordinator.start({
      redisUrl: redis.url,
      runId: "lost-1",
      swarm: "lost",
      concurrency: 1,
      options: {},
      // The host plays it on a scripted model of its own.
      rehearsal: { slow: [{ text: "too late", delay_ms: 30_000 }] },
      redisLossMs: lossMs,
    });
    const events: OrchestratorEvent[] = [];
    coordinator.on((event) => events.push(event));
    const result = coordinator.run({ name: "slow", prompt: "hi" });
    await expect.poll(() => events.some((e) => e.type === "task_started"), { timeout: 30_000, message: "the task to start on the host" }).toBe(true);
    await redis.client.shutdown("NOSAVE").catch(() => undefined);

    const failed = await result;
    expect(failed).toMatchObject({ status: "failed", error: { code: "REDIS_UNREACHABLE" } });
    expect(failed.error?.message).toMatch(/^cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: lost for 1\.5 s/);
    // As the record writes it: the message travels with the code.
    expect(JSON.parse(JSON.stringify(failed.error)).message).toMatch(/lost for 1\.5 s/);
    await expect
      .poll(() => lines.some((line) => line.includes("Reconnecting")), { timeout: 10_000, message: "the host to say it reconnects" })
      .toBe(true);
    expect(lines.find((line) => line.includes("Reconnecting"))).toMatch(
      /^cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: lost for 1\.5 s .*Stopped the tasks of 1 run here\. Reconnecting \(every 2 s at most\) until it is back\.$/,
    );
    await coordinator.close();
    expect(await liveClaudeChildren()).toEqual([]);
    // Redis back: the host serves again, without a restart.
    await redis.restart();
    await expect
      .poll(() => lines.some((line) => line.endsWith("is back: serving runs again")), { timeout: 15_000, message: "the host to say Redis is back" })
      .toBe(true);
    await host.stop();
  }, 60_000);

  it("the coordinator closes each task's transcript when the task ends: a long run holds no file of a finished task", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ t: [{ text: "done {{prompt}}" }] });
    const home = await tempHome("cadre-transcripts-");
    await startHost(redis, model, { name: "h", script: "t" });
    const transcriptsDir = join(home, "transcripts");
    const coordinator = await Coordinator.start({
      redisUrl: redis.url,
      runId: "files-1",
      swarm: "files",
      concurrency: 1,
      options: {},
      transcriptsDir,
    });
    const openTranscripts = async () => {
      const links = await Promise.all((await readdir("/proc/self/fd")).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
      return links.filter((link) => link.startsWith(transcriptsDir));
    };
    try {
      for (const i of [1, 2, 3]) {
        const result = await coordinator.run({ name: `t${i}`, prompt: `item ${i}` });
        expect(result.status).toBe("succeeded");
        await expect.poll(openTranscripts, { timeout: 5_000 }).toEqual([]);
      }
      expect((await readdir(transcriptsDir)).sort()).toEqual(["t1.jsonl", "t2.jsonl", "t3.jsonl"]);
    } finally {
      await coordinator.close();
    }
  }, 90_000);
});
