// tell_peer and read_inbox across hosts: one Redis list per peer.
import type { Redis } from "ioredis";
import { z } from "zod";
import type { InboxMessage, InboxStore } from "../orchestrator/index.ts";
import type { RunKeys } from "./keys.ts";
import { readJson } from "./wire.ts";

const InboxMessageSchema = z.object({ from: z.string(), text: z.string(), at: z.number() });

/** tell_peer and read_inbox across hosts: one Redis list per peer, taken whole and atomically. */
export class RedisInbox implements InboxStore {
  readonly #redis: Redis;
  readonly #keys: RunKeys;

  constructor(redis: Redis, keys: RunKeys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  async post(peer: string, message: InboxMessage): Promise<void> {
    await this.#redis.rpush(this.#keys.inbox(peer), JSON.stringify(message));
  }

  async take(peer: string): Promise<InboxMessage[]> {
    const key = this.#keys.inbox(peer);
    const replies = await this.#redis.multi().lrange(key, 0, -1).del(key).exec();
    const [error, items] = replies?.[0] ?? [null, []];
    if (error) throw error;
    return (items as string[]).map((item) => readJson(InboxMessageSchema, item, "an inbox message"));
  }
}
