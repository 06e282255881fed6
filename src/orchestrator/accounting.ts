// Adding up token usage and cost, and the share of input read from the prompt cache.
import type { ResultMessage } from "../protocol/index.ts";
import { sessionTokens, type TokenCounts, tokensSince } from "../worker/index.ts";
import type { Usage } from "./types.ts";

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

export function addUsage(into: Usage, usage: Record<string, unknown> | undefined): void {
  if (!usage) return;
  into.inputTokens += num(usage.input_tokens);
  into.outputTokens += num(usage.output_tokens);
  into.cacheReadInputTokens += num(usage.cache_read_input_tokens);
  into.cacheCreationInputTokens += num(usage.cache_creation_input_tokens);
}

/** What one result adds to a task's or session's cost and tokens. */
export interface Charge {
  usd: number;
  usage: TokenCounts;
}

/**
 * Cost and tokens of one worker process. The CLI reports `total_cost_usd` and
 * `modelUsage` as running totals for the session, background agents and
 * workflows included, so each result adds only what is new.
 */
export class WorkerCost {
  #reportedTotal = 0;
  #tokens: TokenCounts | undefined;

  /** The cost and tokens this result adds. */
  add(result: ResultMessage): Charge {
    const total = num(result.total_cost_usd);
    const delta = Math.max(0, total - this.#reportedTotal);
    this.#reportedTotal = Math.max(this.#reportedTotal, total);
    const usage = tokensSince(result, this.#tokens);
    this.#tokens = sessionTokens(result) ?? this.#tokens;
    return { usd: delta, usage };
  }
}

/** The share of input tokens read from the prompt cache; undefined before any input. */
export function cacheReadShare(usage: Usage): number | undefined {
  const input = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  return input > 0 ? usage.cacheReadInputTokens / input : undefined;
}

// The API's price ratios to a model's input price (its documented list prices keep to them).
const WRITE_5M = 1.25;
const WRITE_1H = 2;
const READ = 0.1;
const OUTPUT = 5;

/**
 * What the cache reads of one result saved: the same tokens as 5-minute
 * writes, less what they cost as reads. The CLI reports a cost, not its
 * prices, so the input price is the one that, at the API's ratios, gives the
 * cost the CLI reported for this usage; prices the CLI was told to use
 * (managed pricing) carry through.
 */
export function cacheSavingUsd(usage: Record<string, unknown> | undefined, costUsd: number): number {
  if (!usage || costUsd <= 0) return 0;
  const read = num(usage.cache_read_input_tokens);
  if (read === 0) return 0;
  const written = num(usage.cache_creation_input_tokens);
  const split = (usage.cache_creation ?? {}) as Record<string, unknown>;
  const written1h = Math.min(written, num(split.ephemeral_1h_input_tokens));
  const units = num(usage.input_tokens) + WRITE_5M * (written - written1h) + WRITE_1H * written1h + READ * read + OUTPUT * num(usage.output_tokens);
  return read * (WRITE_5M - READ) * (costUsd / units);
}
