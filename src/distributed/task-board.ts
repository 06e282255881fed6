// post_task, list_tasks and wait_tasks across hosts: a host's workers ask through Redis, the coordinator's board answers.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { z } from "zod";
import { type BoardResult, type BoardTask, type TaskBoard, type TaskPost, TaskPostRefusedError } from "../orchestrator/index.ts";
import type { RunKeys } from "./keys.ts";
import { readJson } from "./wire.ts";

/** How long an answer waits in Redis for the host that asked (it is taken at once unless that host died). */
const REPLY_TTL_S = 300;
/** How long the coordinator's read of the requests blocks, so that it sees its stop. */
const POLL_S = 1;

const RequestSchema = z.object({ id: z.string().min(1), poster: z.string() }).and(
  z.discriminatedUnion("op", [
    z.object({
      op: z.literal("post"),
      post: z.object({
        prompt: z.string(),
        name: z.string().optional(),
        agent: z.string().optional(),
        dependsOn: z.array(z.string()).optional(),
      }),
    }),
    z.object({ op: z.literal("list") }),
    z.object({ op: z.literal("wait"), names: z.array(z.string()) }),
  ]),
);
type BoardRequest = z.infer<typeof RequestSchema>;

const ReplySchema = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
type BoardReply = z.infer<typeof ReplySchema>;

/** The board of a run whose coordinator is elsewhere: each call is a request in Redis, and its answer. */
export class RedisTaskBoard implements TaskBoard {
  /** The run's connection and keys: its requests go to `boardRequests`, each answer comes on its own key. */
  readonly #run: { redis: Redis; keys: RunKeys };

  constructor(redis: Redis, keys: RunKeys) {
    this.#run = { redis, keys };
  }

  async post(poster: string, post: TaskPost): Promise<{ name: string; existed: boolean }> {
    return (await this.#ask({ op: "post", poster, post })) as { name: string; existed: boolean };
  }

  async list(): Promise<BoardTask[]> {
    return (await this.#ask({ op: "list", poster: "" })) as BoardTask[];
  }

  async wait(waiter: string, names: readonly string[], signal: AbortSignal): Promise<BoardResult[]> {
    return (await this.#ask({ op: "wait", poster: waiter, names: [...names] }, signal)) as BoardResult[];
  }

  /** Sends one request and waits for its answer on a connection of its own (a blocking read holds its connection). */
  async #ask(request: DistributiveOmit<BoardRequest, "id">, signal?: AbortSignal): Promise<unknown> {
    const { redis, keys } = this.#run;
    const id = randomUUID();
    const reading = redis.duplicate();
    const stop = () => reading.disconnect();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      await redis.rpush(keys.boardRequests, JSON.stringify({ ...request, id }));
      const popped = await reading.blpop(keys.boardReply(id), 0);
      if (popped === null) throw new Error("the run's coordinator did not answer");
      const reply = readJson(ReplySchema, popped[1], "a task board's answer");
      if (!reply.ok) throw new TaskPostRefusedError(reply.code as ConstructorParameters<typeof TaskPostRefusedError>[0], reply.message);
      return reply.value;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw error;
    } finally {
      signal?.removeEventListener("abort", stop);
      reading.disconnect();
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Answers one request with the coordinator's board. */
async function answer(board: TaskBoard, request: BoardRequest, signal: AbortSignal): Promise<BoardReply> {
  try {
    const value =
      request.op === "post"
        ? await board.post(request.poster, request.post)
        : request.op === "list"
          ? await board.list()
          : await board.wait(request.poster, request.names, signal);
    return { ok: true, value };
  } catch (error) {
    const { code = "POST_INVALID", message = String(error) } = error as { code?: string; message?: string };
    return { ok: false, code, message };
  }
}

/**
 * The coordinator's side: takes the hosts' requests from Redis and answers
 * each with `board`, each as it comes (a wait does not hold up a post).
 * Stops at `signal`.
 */
export function serveTaskBoard(redis: Redis, keys: RunKeys, board: TaskBoard, signal: AbortSignal): Promise<void> {
  const reading = redis.duplicate();
  signal.addEventListener("abort", () => reading.disconnect(), { once: true });
  const reply = async (request: BoardRequest) => {
    const key = keys.boardReply(request.id);
    await redis
      .multi()
      .rpush(key, JSON.stringify(await answer(board, request, signal)))
      .expire(key, REPLY_TTL_S)
      .exec();
  };
  return (async () => {
    while (!signal.aborted) {
      const popped = await reading.blpop(keys.boardRequests, POLL_S).catch(async () => {
        // Redis is away (the coordinator's watchdog says so): ask again a moment later, not in a busy loop.
        await sleep(POLL_S * 1000, undefined, { signal }).catch(() => undefined);
        return null;
      });
      if (popped === null) continue;
      let request: BoardRequest;
      try {
        request = readJson(RequestSchema, popped[1], "a task board request");
      } catch {
        continue;
      }
      void reply(request).catch(() => undefined);
    }
  })();
}
