// A steering request through Redis, without claude: the coordinator's HostSteering asks the host that runs the task,
// the host's answerSteering applies it once and answers; no host, a host that took it and died, or data that is no request.
import { Redis } from "ioredis";
import { describe, expect, it, onTestFinished } from "vitest";
import { HostNotAnsweringError, RedisUnreachableError } from "../../src/distributed/errors.ts";
import { CONTROL_CHANNEL, runKeys } from "../../src/distributed/keys.ts";
import { answerSteering, askHost, HostSteering, markSteerable, type SteerTarget } from "../../src/distributed/steering.ts";
import { type OrchestratorEvent, type TaskInfo, TaskNotRunningError } from "../../src/orchestrator/index.ts";
import { type RedisServer, startRedis } from "../support/distributed.ts";

const RUN = "steer-unit";
const keys = runKeys(RUN);
/** Short, so that a test of a host that never answers takes a second, not twenty. */
const ANSWER_MS = 400;

function connection(redis: RedisServer): Redis {
  const client = new Redis(redis.url);
  onTestFinished(() => client.disconnect());
  return client;
}

/** The client once connected: the coordinator's connection is up before it steers anything. */
async function ready(client: Redis): Promise<Redis> {
  await client.ping();
  return client;
}

/** A host's orchestrator that keeps what reached it; only `busy` runs, and has no turn for a message while `turnless`. */
function target(options: { turnless?: boolean } = {}): SteerTarget & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  const reach = (call: unknown[]) => {
    if (call[1] !== "busy") throw new TaskNotRunningError(String(call[1]), []);
    if (options.turnless && call[0] === "send") throw new TaskNotRunningError("busy", [], "has no turn to take a message now");
    calls.push(call);
  };
  return {
    calls,
    sendToTask: (task, text, origin) => reach(["send", task, text, origin?.from]),
    stopTask: (task, origin) => reach(["stop", task, origin?.from]),
    interruptTask: async (task, origin) => reach(["interrupt", task, origin?.from]),
  };
}

/** A host named `name` that took a job of the run and answers each poke for it, as `cadre worker` does; returns the lines it logged. */
async function pokedHost(redis: RedisServer, name: string, to: SteerTarget): Promise<string[]> {
  const lines: string[] = [];
  const main = connection(redis);
  await markSteerable(main, keys, name);
  const subscriber = connection(redis);
  subscriber.on("message", (_channel: string, text: string) => {
    const poke = JSON.parse(text) as { type: string; host?: string };
    if (poke.type === "steer" && poke.host === name) void answerSteering(main, keys, name, to, (line) => lines.push(line));
  });
  await subscriber.subscribe(CONTROL_CHANNEL);
  return lines;
}

function started(task: Partial<TaskInfo> & { name: string }): OrchestratorEvent {
  return {
    type: "task_started",
    task: { id: `t-${task.name}`, agent: undefined, parentId: undefined, ...task },
    attempt: 1,
    pid: undefined,
    worker: "cold",
    startedAt: Date.now(),
  };
}

describe("steering a task on its host through Redis", () => {
  it("reaches the host that runs the task, once, with the text as it was written; a task not running there says so", async () => {
    const redis = await startRedis();
    const [hostA, twinA, hostB] = [target(), target(), target()];
    // Two hosts of one name (a misconfigured fleet): each request is applied by one of them only.
    await pokedHost(redis, "a", hostA);
    await pokedHost(redis, "a", twinA);
    await pokedHost(redis, "b", hostB);
    const steering = new HostSteering(await ready(connection(redis)), keys, RUN, { redisUrl: redis.url, answerMs: ANSWER_MS });
    steering.observe(started({ name: "busy" }), "a");
    steering.observe(started({ name: "other" }), "b");
    steering.observe(started({ id: "t-busy/child", name: "busy/child", parentId: "t-busy" }), "a");
    expect(steering.runningTaskNames).toEqual(["busy", "other", "busy/child"]);

    const text = "$(rm -rf ~) @/etc/passwd --dangerously-skip-permissions\n/clear";
    await steering.sendToTask("busy", text, { from: "cadre send" });
    await steering.interruptTask("busy");
    await steering.stopTask("busy", { from: "cadre stop" });
    // Each applied by one of the twins, whichever took it first.
    const applied = [...hostA.calls, ...twinA.calls];
    expect(applied).toHaveLength(3);
    expect(applied).toEqual(
      expect.arrayContaining([
        ["send", "busy", text, "cadre send"],
        ["interrupt", "busy", undefined],
        ["stop", "busy", "cadre stop"],
      ]),
    );
    expect(hostB.calls).toEqual([]);

    // Host b runs no "other" (the stream said it started there, but it has ended since): a true answer, from the host.
    const notThere = await steering.stopTask("other").catch((error: unknown) => error);
    expect(notThere).toBeInstanceOf(TaskNotRunningError);
    expect((notThere as Error).message).toBe('task "other" is not running (running: busy, busy/child)');
    // Not started anywhere: said at once, without asking a host.
    await expect(steering.sendToTask("never", "hi")).rejects.toThrow('task "never" is not running (running: busy, other, busy/child)');
    // The task ended: it and its children are no longer reachable.
    const finished = { type: "task_finished", task: { id: "t-busy", name: "busy", agent: undefined, parentId: undefined } };
    steering.observe(finished as OrchestratorEvent, "a");
    expect(steering.runningTaskNames).toEqual(["other"]);
    // Nothing is left waiting in Redis but the answers, which expire.
    expect(await redis.client.keys(`${keys.base}:steer:*`)).toEqual([]);
  });

  it("passes on a host's reason a task cannot take a message now", async () => {
    const redis = await startRedis();
    await pokedHost(redis, "a", target({ turnless: true }));
    const steering = new HostSteering(await ready(connection(redis)), keys, RUN, { redisUrl: redis.url, answerMs: ANSWER_MS });
    steering.observe(started({ name: "busy" }), "a");
    await expect(steering.sendToTask("busy", "hello")).rejects.toThrow(new TaskNotRunningError("busy", [], "has no turn to take a message now"));
  });

  it("withdraws a request no host took in time: HostNotAnsweringError says it did not reach the task, and no host applies it later", async () => {
    const redis = await startRedis();
    const client = connection(redis);
    // It took the task's job, and stopped since.
    await markSteerable(client, keys, "gone");
    const steering = new HostSteering(await ready(client), keys, RUN, { redisUrl: redis.url, answerMs: ANSWER_MS });
    steering.observe(started({ name: "busy" }), "gone");
    const asked = Date.now();
    const error = await steering.stopTask("busy", { from: "cadre stop" }).catch((caught: unknown) => caught);
    expect(Date.now() - asked).toBeLessThan(ANSWER_MS + 1_500);
    expect(error).toBeInstanceOf(HostNotAnsweringError);
    expect(error).toMatchObject({ code: "HOST_NOT_ANSWERING", host: "gone", reached: false, olderCadre: false });
    expect((error as Error).message).toBe(
      `no answer from host "gone" within ${ANSWER_MS / 1000} s (has it stopped, or lost Redis?): the stop did not reach the task`,
    );
    // The host comes back (restarted under its name): nothing is waiting for it.
    const late = target();
    await answerSteering(connection(redis), keys, "gone", late, () => {});
    expect(late.calls).toEqual([]);
  });

  it("a host of an older cadre, which ignores the poke and never said it answers requests: the error says so", async () => {
    const redis = await startRedis();
    const client = connection(redis);
    // Runs the task (it took its job) but reads no steering request, as a cadre from before them does.
    const pokes: string[] = [];
    const older = connection(redis);
    older.on("message", (_channel: string, text: string) => pokes.push(text));
    await older.subscribe(CONTROL_CHANNEL);
    const steering = new HostSteering(await ready(client), keys, RUN, { redisUrl: redis.url, answerMs: ANSWER_MS });
    steering.observe(started({ name: "busy" }), "old");
    const error = await steering.sendToTask("busy", "hello").catch((caught: unknown) => caught);
    expect(pokes).toHaveLength(1);
    expect(error).toMatchObject({ code: "HOST_NOT_ANSWERING", host: "old", reached: false, olderCadre: true });
    expect((error as Error).message).toBe(
      `no answer from host "old" within ${ANSWER_MS / 1000} s (it never said it takes steering requests: is it running an older cadre? Upgrade it to steer its tasks): the message did not reach the task`,
    );
  });

  it("says at once that Redis is down rather than wait for the host's answer", async () => {
    const redis = await startRedis();
    const client = connection(redis);
    client.on("error", () => {
      // Reconnecting, as the coordinator's connection does while Redis is away.
    });
    const steering = new HostSteering(await ready(client), keys, RUN, { redisUrl: redis.url, answerMs: 5_000 });
    steering.observe(started({ name: "busy" }), "a");
    await redis.kill();
    await expect.poll(() => client.status).not.toBe("ready");
    const asked = Date.now();
    const error = await steering.stopTask("busy", { from: "cadre stop" }).catch((caught: unknown) => caught);
    expect(Date.now() - asked).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(RedisUnreachableError);
    expect((error as Error).message).toBe(
      `cannot reach Redis at ${redis.url}: the run's connection is down, so the stop for busy cannot reach host "a"; is redis-server running there?`,
    );
  });

  it("says at once that Redis was lost while it waited for the host's answer", async () => {
    const redis = await startRedis();
    const client = await ready(connection(redis));
    client.on("error", () => {
      // Reconnecting, as the coordinator's connection does while Redis is away.
    });
    // Redis dies as the host is poked, before any host answers.
    const subscriber = connection(redis);
    subscriber.on("error", () => {});
    subscriber.on("message", () => void redis.kill());
    await subscriber.subscribe(CONTROL_CHANNEL);
    const steering = new HostSteering(client, keys, RUN, { redisUrl: redis.url, answerMs: 5_000 });
    steering.observe(started({ name: "busy" }), "a");
    const asked = Date.now();
    const error = await steering.interruptTask("busy").catch((caught: unknown) => caught);
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(RedisUnreachableError);
    expect((error as Error).message).toBe(
      `cannot reach Redis at ${redis.url}: the run's connection was lost while host "a" was asked: the interrupt for busy may have reached it; is redis-server running there?`,
    );
  });

  it("a host that took the request and died: the error says it may have reached the task", async () => {
    const redis = await startRedis();
    const client = connection(redis);
    // Takes each request out of Redis and never answers.
    const subscriber = connection(redis);
    subscriber.on("message", () => void client.del(keys.steerRequests("dying")));
    await subscriber.subscribe(CONTROL_CHANNEL);
    const error = await askHost(client, keys, RUN, "dying", { action: "interrupt", task: "busy" }, ANSWER_MS).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "HOST_NOT_ANSWERING", reached: true });
    expect((error as Error).message).toContain("the interrupt may have reached the task");
  });

  it("answers what is not a request with why, and applies nothing of it", async () => {
    const redis = await startRedis();
    const client = connection(redis);
    const host = target();
    const lines: string[] = [];
    await client.hset(keys.steerRequests("a"), "r-1", JSON.stringify({ action: "send", task: "busy" }), "r-2", "not json");
    await answerSteering(client, keys, "a", host, (line) => lines.push(line));
    const answer = async (id: string) => JSON.parse((await client.blpop(keys.steerReply(id), 2))![1]);
    expect(await answer("r-1")).toMatchObject({ ok: false, code: "DISTRIBUTED_DATA" });
    expect(await answer("r-2")).toMatchObject({ ok: false, code: "DISTRIBUTED_DATA", message: expect.stringContaining("not JSON") });
    expect(host.calls).toEqual([]);
    expect(lines).toHaveLength(2);
  });
});
