// One swarm on two hosts: two `cadre worker` processes and `cadre run --redis`, a real redis-server, real claude CLIs.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeTranscript, readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

function tasks(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `  - { name: t${i + 1}, prompt: item ${i + 1} }`);
}

describe("cadre run --redis on two hosts", () => {
  it("holds the global concurrency over both hosts, which both take tasks; summary.json says which host ran each", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 1_500 }] });
    // Four slots over the two hosts, three allowed at once by the run.
    const hosts = [
      await startHost(redis, model, { name: "a", script: "fleet", concurrency: 2 }),
      await startHost(redis, model, { name: "b", script: "fleet", concurrency: 2 }),
    ];
    const file = await swarmFile(["name: fleet", "concurrency: 3", "tasks:", ...tasks(9)]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);

    const summary = await readSummary(out);
    expect(summary.totals).toMatchObject({ tasks: 9, succeeded: 9 });
    for (const [i, task] of summary.tasks.entries()) {
      expect(task.text).toBe(`done item ${i + 1}`);
      expect(task.attempts).toBe(1);
      const transcript = await decodeTranscript(join(out, task.transcript!));
      expect(transcript.at(-1)).toMatchObject({ type: "result", result: `done item ${i + 1}` });
    }
    // Measured at the model: never more than three requests at once, from both hosts together.
    expect(model.requests.filter((r) => r.outcome === "played")).toHaveLength(9);
    expect(model.peakInFlight).toBeLessThanOrEqual(3);
    expect(model.peakInFlight).toBeGreaterThanOrEqual(2);
    const byHost = new Map<string, number>();
    for (const task of summary.tasks) byHost.set(task.host!, (byHost.get(task.host!) ?? 0) + 1);
    expect([...byHost.keys()].sort()).toEqual(["a", "b"]);
    // The run's cost is the hosts' together, counted once in Redis.
    expect(summary.totals.cost_usd).toBeCloseTo(
      summary.tasks.reduce((sum, task) => sum + task.cost_usd, 0),
      6,
    );
    expect(summary.totals.cost_usd).toBeGreaterThan(0);
    // The run is gone from Redis once it is over; the hosts stop serving it.
    expect(await redis.client.keys("cadre:run*")).toEqual([]);
    for (const host of hosts) await host.waitFor(/run \S+: ended/);
  }, 120_000);

  it("holds an agent's max_concurrency over both hosts while other tasks run beside it", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 1_200 }] });
    await startHost(redis, model, { name: "a", script: "fleet", concurrency: 2 });
    await startHost(redis, model, { name: "b", script: "fleet", concurrency: 2 });
    const file = await swarmFile([
      "name: solo",
      "concurrency: 4",
      "agents:",
      "  solo: { description: Works alone, prompt: You work alone., max_concurrency: 1 }",
      "tasks:",
      ...[1, 2, 3].map((i) => `  - { name: s${i}, agent: solo, prompt: solo ${i} }`),
      ...tasks(3),
    ]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect((await readSummary(out)).totals.succeeded).toBe(6);
    // Measured at the model: no two of the agent's requests at once (each takes 1.2 s), while others ran.
    const solo = model.requests.filter((r) => r.outcome === "played" && r.system.includes("You work alone."));
    expect(solo).toHaveLength(3);
    const overlapping = solo.filter((a, i) => solo.some((b, j) => i !== j && Math.abs(a.at - b.at) < 1_150));
    expect(overlapping.map((r) => r.at - solo[0]!.at)).toEqual([]);
    expect(model.peakInFlight).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it("a 429 storm on one host holds back the other: it starts nothing while the back-off lasts", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({
      // Four 429s in a row: the CLI retries after about 0.6, 1.2, 2.4 and 4.8 s.
      storm: [{ text: "done {{prompt}}", fail: { status: 429, times: 4 } }],
      calm: [{ text: "done {{prompt}}", delay_ms: 200 }],
    });
    await startHost(redis, model, { name: "stormy", script: "storm" });
    const calm = await startHost(redis, model, { name: "calm", script: "calm" });
    const file = await swarmFile(["name: storm", "concurrency: 2", "tasks:", ...tasks(8)]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    expect(summary.totals.succeeded).toBe(8);

    const failed = model.requests.filter((r) => r.script === "storm" && r.outcome === "failed");
    expect(failed).toHaveLength(4);
    // From the second 429 to the last, the fleet was backing off (and down to one task at once, held by
    // the stormy host). A calm host left alone would have taken several tasks then (about one a second);
    // it took none. Measured where it takes them: its log says when it took each task from the queue.
    // A host logs "starts" once it has taken the task and synced the shared budget (Redis round trips), and
    // the news of a 429 takes a moment to reach the fleet: CI once saw a "starts" 29 ms after the second 429,
    // so the window opens a second later.
    const from = failed[1]!.at + 1_000;
    const to = failed[3]!.at;
    expect(to - from).toBeGreaterThan(2_000);
    const taken = [...calm.output().matchAll(/^(\S+) run \S+: t\d+ starts/gm)].map((m) => Date.parse(m[1]!));
    // The log is read right: it names every task summary.json says the calm host ran (how many depends on timing).
    const ranByCalm = summary.tasks.filter((task) => task.host === "calm").length;
    expect(ranByCalm).toBeGreaterThan(0);
    expect(taken.length).toBeGreaterThanOrEqual(ranByCalm);
    expect(taken.filter((at) => at > from && at < to).map((at) => at - from)).toEqual([]);
  }, 120_000);

  it("one budget for both hosts: the result that reaches it stops the other host's running task, and nothing else starts", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({
      fast: [{ text: "done {{prompt}}", delay_ms: 300 }],
      slow: [{ text: "too late", delay_ms: 30_000 }],
    });
    await startHost(redis, model, { name: "fast", script: "fast" });
    const slow = await startHost(redis, model, { name: "slow", script: "slow" });
    // One rehearsed turn costs about $0.09 at list price: the first result spends the budget.
    const file = await swarmFile(["name: budget", "concurrency: 2", "budget_usd: 0.01", "tasks:", ...tasks(6)]);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(1);
    await slow.waitFor(/starts/);
    const summary = await readSummary(out);
    const statuses = summary.tasks.map((task) => `${task.host}:${task.status}`).sort();
    expect(statuses.filter((s) => s.endsWith(":succeeded"))).toEqual(["fast:succeeded"]);
    expect(statuses.filter((s) => s.endsWith(":cancelled"))).toEqual(["slow:cancelled"]);
    expect(statuses.filter((s) => s.endsWith(":skipped"))).toHaveLength(4);
    for (const task of summary.tasks.filter((t) => t.status !== "succeeded")) expect(task.error?.code).toBe("BUDGET_EXCEEDED");
    // The slow host's task was stopped, not waited for; no task after the budget reached the model.
    const cancelled = summary.tasks.find((task) => task.status === "cancelled")!;
    expect(cancelled.duration_ms).toBeLessThan(25_000);
    const reached = model.requests.filter((r) => r.outcome !== "side");
    expect(reached.filter((r) => r.script === "fast")).toHaveLength(1);
    // The slow host's one request, if its claude got that far before it was stopped.
    expect(reached.filter((r) => r.script === "slow").length).toBeLessThanOrEqual(1);
    expect(summary.totals.cost_usd).toBeGreaterThan(0.01);
  }, 120_000);
});
