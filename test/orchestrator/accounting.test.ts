// The figures of the record that cadre computes itself: the cache-read share and what cache reads saved.
import { describe, expect, it } from "vitest";
import { cacheReadShare, cacheSavingUsd } from "../../src/orchestrator/accounting.ts";

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
