// What a model call costs before its turn's result says: the model's list prices, scaled as the CLI's reported costs show them.
import type { AssistantMessage, ModelUsage, ResultMessage } from "../protocol/index.ts";
import { finiteNumber, type ReplyPricer } from "./accounting.ts";

/** USD per million tokens of each kind. */
interface Prices {
  input: number;
  output: number;
  write5m: number;
  write1h: number;
  read: number;
}

const tier = (input: number, read = input / 10): Prices => ({ input, output: 5 * input, write5m: 1.25 * input, write1h: 2 * input, read });

/** List prices by model, as the pinned CLI prices them (its price tiers); the first that matches. */
const LIST_PRICES: ReadonlyArray<[RegExp, Prices]> = [
  [/opus-5-5/, tier(4, 0.2)],
  [/3-opus|opus-3|opus-4(-[01])?(-\d{8})?$/, tier(15)],
  [/opus/, tier(5)],
  [/sonnet-5/, tier(2)],
  [/sonnet/, tier(3)],
  [/haiku-5/, tier(0.1)],
  [/3-5-haiku|haiku-3/, tier(0.8)],
  [/haiku/, tier(1)],
];
/** A model the table does not know: priced as the dearest current Opus, so that a budget errs to stopping early. */
const UNKNOWN_PRICES = tier(5);
/** The characters of a reply per output token: a reply's own size estimates its output before its final usage is known. */
const CHARS_PER_TOKEN = 4;

/** One call's or one model's tokens of each kind. */
interface Tokens {
  input: number;
  output: number;
  written: number;
  written1h: number;
  read: number;
}

/**
 * Prices each model call as its reply arrives, as the turn's result will. An
 * assistant message carries its call's input-side usage but not yet its output
 * (the CLI writes it before the reply's final usage): the output is estimated
 * from the reply's own size. A model's list prices are scaled by what the CLI's
 * last reported cost for it (`modelUsage`'s `costUSD`) came to against them, so
 * that managed pricing, or a model the table prices wrong, carries through.
 */
export class PriceBook implements ReplyPricer {
  /** Model → the CLI's cost over its list-price cost. */
  readonly #scale = new Map<string, number>();

  /** Learns each model's scale from a result's running totals per model. */
  learn(result: ResultMessage): void {
    for (const [model, totals] of Object.entries(result.modelUsage ?? {})) {
      const listUsd = usdAt(pricesOf(model), modelTokens(totals));
      const costUsd = totals.costUSD ?? 0;
      if (listUsd > 0 && costUsd > 0) this.#scale.set(model, costUsd / listUsd);
    }
  }

  /** What this part of a reply costs: its call's input side when `withInput` (the first part of the call seen), and its output. */
  price(message: AssistantMessage, withInput: boolean): number {
    const { usage, model = "", content } = message.message;
    const chars = content.reduce((sum, block) => sum + blockChars(block), 0);
    const output = Math.max(withInput ? finiteNumber(usage?.output_tokens) : 0, Math.ceil(chars / CHARS_PER_TOKEN));
    const tokens = withInput ? { ...callTokens(usage ?? {}), output } : { input: 0, written: 0, written1h: 0, read: 0, output };
    return usdAt(pricesOf(model), tokens) * (this.#scale.get(model) ?? 1);
  }
}

function pricesOf(model: string): Prices {
  return LIST_PRICES.find(([family]) => family.test(model))?.[1] ?? UNKNOWN_PRICES;
}

function usdAt(prices: Prices, tokens: Tokens): number {
  const written5m = tokens.written - tokens.written1h;
  const perMillion =
    tokens.input * prices.input +
    tokens.output * prices.output +
    written5m * prices.write5m +
    tokens.written1h * prices.write1h +
    tokens.read * prices.read;
  return perMillion / 1_000_000;
}

/** The input side of one call's usage (the API's field names). */
function callTokens(usage: Record<string, unknown>): Tokens {
  const written = finiteNumber(usage.cache_creation_input_tokens);
  const split = (usage.cache_creation ?? {}) as Record<string, unknown>;
  return {
    input: finiteNumber(usage.input_tokens),
    output: 0,
    written,
    written1h: Math.min(written, finiteNumber(split.ephemeral_1h_input_tokens)),
    read: finiteNumber(usage.cache_read_input_tokens),
  };
}

function modelTokens(totals: ModelUsage): Tokens {
  const written = finiteNumber(totals.cacheCreationInputTokens);
  return {
    input: finiteNumber(totals.inputTokens),
    output: finiteNumber(totals.outputTokens),
    written,
    written1h: Math.min(written, finiteNumber(totals.cacheCreationEphemeral1hInputTokens)),
    read: finiteNumber(totals.cacheReadInputTokens),
  };
}

/** A content block's size in characters: its text, its thinking, or its tool call's input. */
function blockChars(block: AssistantMessage["message"]["content"][number]): number {
  const { text, thinking, input } = block as { text?: unknown; thinking?: unknown; input?: unknown };
  if (typeof text === "string") return text.length;
  if (typeof thinking === "string") return thinking.length;
  return input === undefined ? 0 : JSON.stringify(input).length;
}
