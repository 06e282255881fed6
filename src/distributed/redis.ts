// Connections to Redis: one try and a clear error at start, reconnects with a capped back-off once running.
import { Redis } from "ioredis";
import { RedisUnreachableError } from "./errors.ts";
import { redactUrl } from "./url.ts";

/** How long a lost connection may take to come back before the run gives up on Redis. */
export const DEFAULT_REDIS_LOSS_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** A lost connection is tried again after 0.1 s, 0.2 s, … and then this often, for as long as it takes. */
export const RECONNECT_CAP_MS = 2_000;

/**
 * A connection that is up, or a RedisUnreachableError after one try (never a
 * hang). Once up, it reconnects by itself; BullMQ needs
 * maxRetriesPerRequest: null, so commands wait while it does: see watchLoss.
 */
export async function connectRedis(url: string, name: string): Promise<Redis> {
  let lastError = "no answer";
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    connectTimeout: CONNECT_TIMEOUT_MS,
    connectionName: name,
    retryStrategy: () => null,
  });
  // Without a listener ioredis prints every failed reconnect; the watchdog reports a lasting loss instead.
  redis.on("error", (error: Error) => {
    lastError = error.message;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (cause) {
    redis.disconnect();
    throw new RedisUnreachableError(redactUrl(url), lastError, { cause });
  }
  redis.options.retryStrategy = (attempt) => Math.min(100 * attempt, RECONNECT_CAP_MS);
  return redis;
}

/**
 * Calls `onLost` once when the connection has been down for `ms`: Redis
 * unreachable mid-run ends the run with a clear error instead of a hang.
 * Returns the function that stops watching.
 */
export function watchLoss(redis: Redis, url: string, ms: number, onLost: (error: RedisUnreachableError) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastError = "the connection closed";
  const onError = (error: Error) => {
    lastError = error.message;
  };
  const onDown = () => {
    timer ??= setTimeout(() => onLost(new RedisUnreachableError(redactUrl(url), `lost for ${ms / 1000} s (${lastError})`)), ms);
  };
  const onReady = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  redis.on("error", onError);
  redis.on("close", onDown);
  redis.on("ready", onReady);
  return () => {
    clearTimeout(timer);
    redis.off("error", onError);
    redis.off("close", onDown);
    redis.off("ready", onReady);
  };
}

/**
 * BullMQ needs Redis to keep every key (`maxmemory-policy noeviction`): one
 * that evicts loses jobs under memory pressure. The warning to give, or
 * undefined when the policy is right or cannot be read (a managed Redis may refuse CONFIG).
 */
export async function evictionWarning(redis: Redis, url: string): Promise<string | undefined> {
  const reply = (await redis.config("GET", "maxmemory-policy").catch(() => [])) as string[];
  const policy = reply[1];
  if (policy === undefined || policy === "noeviction") return undefined;
  return `Redis at ${redactUrl(url)} has maxmemory-policy ${policy}: it may drop a run's jobs when full; set it to noeviction (redis-cli CONFIG SET maxmemory-policy noeviction)`;
}

/** Deletes every key that matches `pattern`, with SCAN: KEYS walks the whole keyspace in one blocking call, which stalls every other client of a large Redis. */
export async function deleteMatching(redis: Redis, pattern: string): Promise<void> {
  for await (const keys of redis.scanStream({ match: pattern, count: 500 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) await redis.del(...keys);
  }
}
