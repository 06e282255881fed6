// Adding up token usage and cost, and the share of input read from the prompt cache.
import type { AssistantMessage, CliMessage, ResultMessage } from "../protocol/index.ts";
import { noTokens, sessionTokens, type TokenCounts, tokensSince } from "../worker/index.ts";
import type { Usage } from "./types.ts";

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

/** A number from a usage field; 0 when it is absent or not a finite number. */
export function finiteNumber(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

export function addUsage(into: Usage, usage: Record<string, unknown> | undefined): void {
  if (!usage) return;
  into.inputTokens += finiteNumber(usage.input_tokens);
  into.outputTokens += finiteNumber(usage.output_tokens);
  into.cacheReadInputTokens += finiteNumber(usage.cache_read_input_tokens);
  into.cacheCreationInputTokens += finiteNumber(usage.cache_creation_input_tokens);
}

/** What one result adds to a task's or session's cost and tokens. */
export interface Charge {
  /** What to add to spend now: a reply's price, or a result's cost less what its replies were charged. */
  usd: number;
  usage: TokenCounts;
  /** With a result: what the CLI counted since the previous result (the turn's cost). */
  turnUsd?: number;
}

/**
 * Cost and tokens of one worker process. The CLI reports `total_cost_usd` and
 * `modelUsage` as running totals for the session, background agents and
 * workflows included, so each result adds only what is new. Given a price
 * book, each model call is charged as its reply arrives (`stream`), and the
 * result then adds what the CLI counted less what the replies were charged.
 */
/** Prices a reply as it arrives (PriceBook), and learns from the costs results report. */
export interface ReplyPricer {
  price(message: AssistantMessage, withInput: boolean): number;
  learn(result: ResultMessage): void;
}

export class WorkerCost {
  readonly #prices: ReplyPricer | undefined;
  #reportedTotal = 0;
  #tokens: TokenCounts | undefined;
  /** What the replies since the last result were charged. */
  #streamedUsd = 0;
  /** The API message ids of the calls whose input side is charged. */
  readonly #calls = new Set<string>();

  constructor(prices?: ReplyPricer) {
    this.#prices = prices;
  }

  /** What a message adds: a result's cost, or (with a price book) a reply's; undefined for any other. */
  observe(message: CliMessage): Charge | undefined {
    if (message.type === "result") return this.add(message);
    return message.type === "assistant" ? this.stream(message) : undefined;
  }

  /** What one reply (a part of a model call's answer) costs, priced ahead of its turn's result; undefined without a price book. */
  stream(message: AssistantMessage): Charge | undefined {
    if (this.#prices === undefined || message.message.usage == null) return undefined;
    // The CLI writes a reply of several blocks as one message each, with the call's usage on every one.
    const id = message.message.id ?? message.uuid ?? "";
    const firstOfCall = !this.#calls.has(id);
    this.#calls.add(id);
    const usd = this.#prices.price(message, firstOfCall);
    this.#streamedUsd += usd;
    return { usd, usage: noTokens() };
  }

  /** The cost and tokens this result adds, less what its replies were charged as they came. */
  add(result: ResultMessage): Charge {
    this.#prices?.learn(result);
    const total = finiteNumber(result.total_cost_usd);
    const delta = Math.max(0, total - this.#reportedTotal);
    this.#reportedTotal = Math.max(this.#reportedTotal, total);
    const usage = tokensSince(result, this.#tokens);
    this.#tokens = sessionTokens(result) ?? this.#tokens;
    const usd = delta - this.#streamedUsd;
    this.#streamedUsd = 0;
    return { usd, usage, turnUsd: delta };
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
  const read = finiteNumber(usage.cache_read_input_tokens);
  if (read === 0) return 0;
  const written = finiteNumber(usage.cache_creation_input_tokens);
  const split = (usage.cache_creation ?? {}) as Record<string, unknown>;
  const written1h = Math.min(written, finiteNumber(split.ephemeral_1h_input_tokens));
  const units =
    finiteNumber(usage.input_tokens) +
    WRITE_5M * (written - written1h) +
    WRITE_1H * written1h +
    READ * read +
    OUTPUT * finiteNumber(usage.output_tokens);
  return read * (WRITE_5M - READ) * (costUsd / units);
}
