// The figures cadre computes itself: the cache-read share, what cache reads saved, and each model call priced as its reply arrives.
import { describe, expect, it } from "vitest";
import { cacheReadShare, cacheSavingUsd, WorkerCost } from "../../src/orchestrator/accounting.ts";
import { PriceBook } from "../../src/orchestrator/price-book.ts";
import type { AssistantMessage, ResultMessage } from "../../src/protocol/index.ts";

/** USD per token at list prices that keep to the API's ratios (a model at $3 per million input tokens). */
const PRICE = { input: 3e-6, write5m: 3.75e-6, write1h: 6e-6, read: 0.3e-6, output: 15e-6 };

describe("cache accounting", () => {
  it("the share of input read from the cache", () => {
    expect(cacheReadShare({ inputTokens: 100, outputTokens: 50, cacheCreationInputTokens: 2_000, cacheReadInputTokens: 17_900 })).toBeCloseTo(
      0.895,
      10,
    );
    expect(cacheReadShare({ inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 })).toBeUndefined();
  });

  it("what cache reads saved: the read tokens at the write price less the read price, from the cost the CLI reported", () => {
    const usage = { input_tokens: 274, output_tokens: 40, cache_creation_input_tokens: 2_407, cache_read_input_tokens: 19_619 };
    const cost = 274 * PRICE.input + 40 * PRICE.output + 2_407 * PRICE.write5m + 19_619 * PRICE.read;
    expect(cacheSavingUsd(usage, cost)).toBeCloseTo(19_619 * (PRICE.write5m - PRICE.read), 12);

    const hour = { ...usage, cache_creation: { ephemeral_1h_input_tokens: 2_407, ephemeral_5m_input_tokens: 0 } };
    const hourCost = 274 * PRICE.input + 40 * PRICE.output + 2_407 * PRICE.write1h + 19_619 * PRICE.read;
    expect(cacheSavingUsd(hour, hourCost)).toBeCloseTo(19_619 * (PRICE.write5m - PRICE.read), 12);

    // Managed pricing at 80 % of list: the saving scales with it.
    expect(cacheSavingUsd(usage, 0.8 * cost)).toBeCloseTo(0.8 * 19_619 * (PRICE.write5m - PRICE.read), 12);
    expect(cacheSavingUsd({ ...usage, cache_read_input_tokens: 0 }, cost)).toBe(0);
    expect(cacheSavingUsd(usage, 0)).toBe(0);
    expect(cacheSavingUsd(undefined, cost)).toBe(0);
  });
});

/** The usage of a call as the CLI writes it on an assistant message (output_tokens not final yet). */
function reply(id: string, content: AssistantMessage["message"]["content"], read: number, written = 0): AssistantMessage {
  const usage = { input_tokens: 300, output_tokens: 1, cache_read_input_tokens: read, cache_creation_input_tokens: written };
  return { type: "assistant", message: { id, role: "assistant", model: "claude-opus-5-5", content, usage } };
}

/** A result whose running totals are `costUsd`, with one model's totals. */
function result(costUsd: number, totals: Record<string, number>): ResultMessage {
  return {
    type: "result",
    subtype: "success",
    is_error: false,
    total_cost_usd: costUsd,
    modelUsage: { "claude-opus-5-5": { ...totals, costUSD: costUsd } },
  } as ResultMessage;
}

describe("spend as replies arrive", () => {
  it("prices a call as the CLI does: its input side once, its output from the reply's size", () => {
    const prices = new PriceBook();
    const call = reply("m1", [{ type: "text", text: "x".repeat(40) }], 22_030, 49);
    // Opus 5.5's list prices: $4 input, $20 output, $5 cache writes, $0.20 cache reads (per million tokens).
    expect(prices.price(call, true)).toBeCloseTo((300 * 4 + 10 * 20 + 49 * 5 + 22_030 * 0.2) / 1e6, 12);
    expect(prices.price(call, false), "a later block of the same call: its output alone").toBeCloseTo((10 * 20) / 1e6, 12);
    // Managed pricing at 80 %: the result's cost says so, and the next call is priced at it.
    prices.learn(result(0.8 * 0.0051, { inputTokens: 1_000, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 200 }));
    expect(prices.price(call, true)).toBeCloseTo((0.8 * (300 * 4 + 10 * 20 + 49 * 5 + 22_030 * 0.2)) / 1e6, 12);
  });

  it("charges each call once as its replies arrive; the result adds what the CLI counted less that", () => {
    const cost = new WorkerCost(new PriceBook());
    const first = cost.observe(reply("m1", [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "echo" } }], 0, 20_000));
    const again = cost.observe(reply("m1", [{ type: "text", text: "and more" }], 0, 20_000));
    expect(first?.usd).toBeGreaterThan(0.1);
    expect(again?.usd, "the second block of the same call: its output alone").toBeLessThan(1e-4);
    const streamed = (first?.usd ?? 0) + (again?.usd ?? 0);
    const settled = cost.observe(result(0.11, { inputTokens: 300, outputTokens: 8, cacheReadInputTokens: 0, cacheCreationInputTokens: 20_000 }));
    expect((settled?.usd ?? 0) + streamed).toBeCloseTo(0.11, 12);
    expect(settled?.usage.cache_creation_input_tokens).toBe(20_000);
    expect(new WorkerCost().observe(reply("m2", [], 0)), "without a price book, only results count").toBeUndefined();
  });
});
