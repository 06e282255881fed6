// The run's spending and token usage over all hosts, kept in Redis: the one budget of the fleet.
import type { Redis } from "ioredis";
import type { SpendingLedger, Usage } from "../orchestrator/index.ts";
import { CONTROL_CHANNEL, type RunKeys } from "./keys.ts";
import type { ControlMessage } from "./wire.ts";

const USAGE_FIELDS = ["inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"] as const;

/** The run's spending and token usage over all hosts, as Redis holds them. */
export async function readTotals(redis: Redis, keys: RunKeys): Promise<{ costUsd: number; usage: Usage }> {
  const [spent, usage] = await Promise.all([redis.get(keys.spent), redis.hgetall(keys.usage)]);
  const count = (field: (typeof USAGE_FIELDS)[number]) => Number(usage[field] ?? 0);
  return {
    costUsd: Number(spent ?? 0),
    usage: {
      inputTokens: count("inputTokens"),
      outputTokens: count("outputTokens"),
      cacheReadInputTokens: count("cacheReadInputTokens"),
      cacheCreationInputTokens: count("cacheCreationInputTokens"),
    },
  };
}

/** Adds what the run had spent back to a Redis that lost it (restarted empty), so that its budget still holds. */
export async function restoreTotals(redis: Redis, keys: RunKeys, totals: { costUsd: number; usage: Usage }): Promise<void> {
  const write = redis.multi().incrbyfloat(keys.spent, totals.costUsd);
  for (const field of USAGE_FIELDS) write.hincrby(keys.usage, field, totals.usage[field]);
  await write.exec();
}

/** Where a ledger counts: dollars, and (the run's alone) token usage. */
export interface LedgerKeys {
  spent: string;
  usage?: string;
}

/**
 * One ledger for a budget on many hosts (the run's, or an agent's or a
 * task's): every charge is added to a counter in Redis (INCRBYFLOAT is
 * atomic), and the total it answers is what this host knows. The host whose
 * charge takes the total over the limit says so on the control channel; every
 * host then learns it (sync) and its orchestrator stops what the budget covers
 * (onChange). `sync()` also runs before a task starts.
 */
export class RedisLedger implements SpendingLedger {
  readonly #redis: Redis;
  readonly #keys: LedgerKeys;
  readonly #runId: string;
  readonly #limitUsd: number | undefined;
  readonly #listeners: Array<() => void> = [];
  #known = 0;
  #announced = false;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(redis: Redis, runId: string, keys: LedgerKeys, limitUsd: number | undefined) {
    this.#redis = redis;
    this.#runId = runId;
    this.#keys = keys;
    this.#limitUsd = limitUsd;
  }

  get spentUsd(): number {
    return this.#known;
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  add(usd: number, usage: Usage): void {
    // What this host adds counts at once; the answer brings what other hosts added meanwhile.
    this.#known += usd;
    const multi = this.#redis.multi().incrbyfloat(this.#keys.spent, usd);
    if (this.#keys.usage !== undefined) for (const field of USAGE_FIELDS) multi.hincrby(this.#keys.usage, field, usage[field]);
    const write = multi.exec().then((replies) => {
      this.#learn(Number(replies?.[0]?.[1] ?? 0));
      if (this.#limitUsd !== undefined && this.#known >= this.#limitUsd && !this.#announced) {
        this.#announced = true;
        const message: ControlMessage = { type: "budget", run: this.#runId };
        this.#track(this.#redis.publish(CONTROL_CHANNEL, JSON.stringify(message)));
      }
    });
    this.#track(write);
  }

  /** Reads the run's total from Redis (before a task starts, and when another host says the budget is reached). */
  async sync(): Promise<void> {
    this.#learn(Number((await this.#redis.get(this.#keys.spent)) ?? 0));
  }

  /** Resolves once every charge so far is in Redis. */
  async flush(): Promise<void> {
    await Promise.all(this.#pending);
  }

  #learn(total: number): void {
    if (total <= this.#known) return;
    this.#known = total;
    for (const listener of this.#listeners) listener();
  }

  #track(promise: Promise<unknown>): void {
    // A failed write is the connection's problem, which the watchdog reports.
    const settled = promise.catch(() => undefined).finally(() => this.#pending.delete(settled));
    this.#pending.add(settled);
  }
}
