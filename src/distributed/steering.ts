// Steering a task of a distributed run: the coordinator asks the host that runs it through Redis, and that host answers, once.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { type Orchestrator, type OrchestratorEvent, type SteerOrigin, type TaskInfo, TaskNotRunningError } from "../orchestrator/index.ts";
import { within } from "../util/within.ts";
import { HostNotAnsweringError, RedisUnreachableError, RemoteSteeringError } from "./errors.ts";
import { CONTROL_CHANNEL, type RunKeys } from "./keys.ts";
import { redactUrl } from "./url.ts";
import { type ControlMessage, readJson } from "./wire.ts";

/**
 * How long the coordinator waits for a host's answer. A host takes a request at once when poked, or within its
 * next look (every 5 s) when the poke was lost; an interrupt also waits for its CLI's answer.
 */
export const STEER_ANSWER_MS = 10_000;
/** Beyond Redis's own timeout, for the round trip; a command that waits on a lost connection ends here. */
const SLACK_MS = 2_000;
/** Requests nobody waits for any more (their coordinator ended while it waited) leave Redis after this. */
const REQUEST_TTL_MS = 3 * STEER_ANSWER_MS;
/** An answer nobody took (its coordinator ended) leaves Redis after this. */
const ANSWER_TTL_S = 60;

/** A steering request as a host reads it from Redis: the task is a name and the text is data, never a command, a flag or a path. */
const HostSteerRequestSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("send"), task: z.string().min(1), text: z.string().min(1), from: z.string().optional() }),
  z.object({ action: z.literal("interrupt"), task: z.string().min(1), from: z.string().optional() }),
  z.object({ action: z.literal("stop"), task: z.string().min(1), from: z.string().optional() }),
]);
export type HostSteerRequest = z.infer<typeof HostSteerRequestSchema>;

/** A host's answer: done, or why not (a TaskNotRunningError's reason, when it gave one, in `why`). */
const HostSteerReplySchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string(), why: z.string().optional() }),
]);
export type HostSteerReply = z.infer<typeof HostSteerReplySchema>;

/** What a host reaches its tasks with: its orchestrator. */
export type SteerTarget = Pick<Orchestrator, "sendToTask" | "interruptTask" | "stopTask">;

/** A task a host started and has not ended, as the run's event stream tells, and that host. */
interface PlacedTask {
  info: TaskInfo;
  host: string;
}

/**
 * The coordinator's side: which host runs each task (its `task_started` came from there, and its end has not),
 * and a message, interrupt or stop for one of them sent to that host, with the host's answer.
 */
export class HostSteering {
  /** By task id. */
  readonly #placed = new Map<string, PlacedTask>();
  readonly #redis: Redis;
  readonly #keys: RunKeys;
  readonly #runId: string;
  readonly #redisUrl: string;
  readonly #answerMs: number;

  constructor(redis: Redis, keys: RunKeys, runId: string, options: { redisUrl: string; answerMs?: number }) {
    this.#redis = redis;
    this.#keys = keys;
    this.#runId = runId;
    this.#redisUrl = options.redisUrl;
    this.#answerMs = options.answerMs ?? STEER_ANSWER_MS;
  }

  /** Follows one event of the run's stream, from `host`: a task starts there (each attempt, wherever it runs now), and ends. */
  observe(event: OrchestratorEvent, host: string): void {
    if (event.type === "task_started") this.#placed.set(event.task.id, { info: event.task, host });
    else if (event.type === "task_finished") this.ended(event.task.id);
  }

  /** The task has ended (its result counted, or lost with its host): neither it nor its children can be reached. */
  ended(taskId: string): void {
    this.#placed.delete(taskId);
    for (const [id, placed] of this.#placed) if (placed.info.parentId === taskId) this.ended(id);
  }

  /** The run is over: nothing to reach. */
  clear(): void {
    this.#placed.clear();
  }

  /** The names of the tasks running on the hosts now (the run's own first), as Orchestrator.runningTaskNames. */
  get runningTaskNames(): string[] {
    return [...new Set(this.#running().map((placed) => placed.info.name))];
  }

  /** Writes `text` into the running turn of the task, on its host; resolves once the host has. */
  async sendToTask(name: string, text: string, origin: SteerOrigin = {}): Promise<void> {
    await this.#ask({ action: "send", task: name, text, ...fromOf(origin) });
  }

  /** Ends the running turn of the task, on its host; the task ends as interrupted. */
  async interruptTask(name: string, origin: SteerOrigin = {}): Promise<void> {
    await this.#ask({ action: "interrupt", task: name, ...fromOf(origin) });
  }

  /** Ends the task as cancelled, on its host (its process and tools killed); the other tasks go on. */
  async stopTask(name: string, origin: SteerOrigin = {}): Promise<void> {
    await this.#ask({ action: "stop", task: name, ...fromOf(origin) });
  }

  #running(): PlacedTask[] {
    const all = [...this.#placed.values()];
    return [...all.filter((placed) => placed.info.parentId === undefined), ...all.filter((placed) => placed.info.parentId !== undefined)];
  }

  async #ask(request: HostSteerRequest): Promise<void> {
    const placed = this.#running().find((each) => each.info.name === request.task);
    if (placed === undefined) throw new TaskNotRunningError(request.task, this.runningTaskNames);
    const reply = await this.#askWhileConnected(placed.host, request);
    if (reply.ok) return;
    if (reply.code === "TASK_NOT_RUNNING") {
      // Its host knows better than the stream: the task has no process there now (between attempts, or about to end).
      throw new TaskNotRunningError(
        request.task,
        this.runningTaskNames.filter((name) => name !== request.task),
        reply.why,
      );
    }
    throw new RemoteSteeringError(placed.host, reply.code, reply.message);
  }

  /**
   * askHost, as long as the run's connection to Redis is up: down (reconnecting, or given up) is said at once, as
   * the run's own commands tell it, rather than after the answer's wait; lost during the wait, at once too.
   */
  async #askWhileConnected(host: string, request: HostSteerRequest): Promise<HostSteerReply> {
    const lost = (detail: string) => new RedisUnreachableError(redactUrl(this.#redisUrl), detail);
    if (this.#redis.status !== "ready") {
      throw lost(`the run's connection is down, so the ${request.action} for ${request.task} cannot reach host "${host}"`);
    }
    let onClose = () => {};
    const closed = new Promise<never>((_resolve, reject) => {
      onClose = () =>
        reject(lost(`the run's connection was lost while host "${host}" was asked: the ${request.action} for ${request.task} may have reached it`));
    });
    const asked = askHost(this.#redis, this.#keys, this.#runId, host, request, this.#answerMs);
    this.#redis.once("close", onClose);
    try {
      return await Promise.race([asked, closed]);
    } finally {
      this.#redis.off("close", onClose);
      // Left behind when the connection went first: it ends by its own time limit, and nobody waits for it.
      asked.catch(() => undefined);
    }
  }
}

/** Who asked, when someone is named: a request carries no `from` rather than an undefined one. */
function fromOf(origin: SteerOrigin): { from?: string } {
  return origin.from === undefined ? {} : { from: origin.from };
}

/**
 * Asks `host` to apply `request` and resolves with its answer. The request waits in the host's hash in Redis and
 * the host is poked; the host takes it out (once: see answerSteering) and answers on the request's own list. With
 * no answer within `answerMs` the request is withdrawn, so that no host applies it later, and a HostNotAnsweringError
 * says it did not reach the task (and whether the host may run an older cadre, which takes no requests); if a host had
 * taken it, that host gets as long again to answer.
 */
export async function askHost(
  redis: Redis,
  keys: RunKeys,
  runId: string,
  host: string,
  request: HostSteerRequest,
  answerMs = STEER_ANSWER_MS,
): Promise<HostSteerReply> {
  const id = randomUUID();
  const requests = keys.steerRequests(host);
  const answers = keys.steerReply(id);
  // A blocking read holds its connection: one of its own, for as long as this request waits.
  const reading = redis.duplicate();
  reading.on("error", () => {
    // The coordinator's watchdog reports a lost Redis; this wait ends by its own time limit.
  });
  try {
    const asked = async () => {
      await redis.multi().hset(requests, id, JSON.stringify(request)).pexpire(requests, REQUEST_TTL_MS).exec();
      const poke: ControlMessage = { type: "steer", run: runId, host };
      await redis.publish(CONTROL_CHANNEL, JSON.stringify(poke));
      return reading.blpop(answers, answerMs / 1000);
    };
    let answer = await within(asked(), answerMs + SLACK_MS);
    if (answer === null) {
      // Withdrawn while still in the hash: then no host took it, and none will.
      const withdrawn = await within(redis.hdel(requests, id), SLACK_MS);
      if (withdrawn === 1) {
        // A host that took a job of the run said so if it answers requests: one that did not is of a cadre from before them.
        const olderCadre = (await within(redis.sismember(keys.steerHosts, host), SLACK_MS)) === 0;
        throw new HostNotAnsweringError(host, request.action, answerMs, false, olderCadre);
      }
      if (withdrawn === null) throw new HostNotAnsweringError(host, request.action, answerMs, true);
      answer = await within(reading.blpop(answers, answerMs / 1000), answerMs + SLACK_MS);
      if (answer === null) throw new HostNotAnsweringError(host, request.action, 2 * answerMs, true);
    }
    return readJson(HostSteerReplySchema, answer[1], "a host's answer to a steering request");
  } finally {
    reading.disconnect();
  }
}

/** The host's side, as it takes a job of the run: says that it answers steering requests (see askHost). */
export async function markSteerable(redis: Redis, keys: RunKeys, host: string): Promise<void> {
  await redis.sadd(keys.steerHosts, host);
}

/**
 * The host's side: takes each request waiting for host `host`, applies it to `target` and answers it. A request is
 * taken out of Redis atomically before it is applied, so it is applied once: by one of two hosts of the same name,
 * by a host restarted meanwhile only if its coordinator still waits (else it was withdrawn), never twice. Resolves
 * once the waiting requests are taken; each is answered as soon as it is applied.
 */
export async function answerSteering(redis: Redis, keys: RunKeys, host: string, target: SteerTarget, log: (line: string) => void): Promise<void> {
  const requests = keys.steerRequests(host);
  const ids = await redis.hkeys(requests);
  await Promise.all(
    ids.map(async (id) => {
      // Read and removed in one step: whoever removes it applies it.
      const replies = (await redis.multi().hget(requests, id).hdel(requests, id).exec()) ?? [];
      const [text, removed] = [replies[0]?.[1], replies[1]?.[1]];
      // Another host of this name took it first, or its coordinator withdrew it.
      if (removed !== 1 || typeof text !== "string") return;
      void apply(target, text, log)
        .then(async (reply) => {
          const key = keys.steerReply(id);
          await redis.multi().rpush(key, JSON.stringify(reply)).expire(key, ANSWER_TTL_S).exec();
        })
        .catch((error: unknown) => log(`could not answer a steering request: ${(error as Error).message}`));
    }),
  );
}

/** Applies one request (checked here, at the edge: Redis may hold anything) and says how it went. */
async function apply(target: SteerTarget, text: string, log: (line: string) => void): Promise<HostSteerReply> {
  let request: HostSteerRequest | undefined;
  try {
    request = readJson(HostSteerRequestSchema, text, "a steering request");
    const origin = fromOf(request);
    if (request.action === "send") target.sendToTask(request.task, request.text, origin);
    else if (request.action === "stop") target.stopTask(request.task, origin);
    else await target.interruptTask(request.task, origin);
    log(`${request.action} for ${request.task}${request.from === undefined ? "" : ` from ${request.from}`}: done`);
    return { ok: true };
  } catch (error) {
    const { code = "STEERING_FAILED", message = String(error) } = error as { code?: string; message?: string };
    log(`${request?.action ?? "a steering request"}${request ? ` for ${request.task}` : ""}: ${message}`);
    const why = error instanceof TaskNotRunningError ? error.why : undefined;
    return { ok: false, code, message, ...(why !== undefined && { why }) };
  }
}
