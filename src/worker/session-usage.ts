// What a session's model calls used, its background agents and workflows included, from the CLI's running totals.
import type { ApiUsage, ResultMessage } from "../protocol/index.ts";

export type TokenCounts = {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
};

const FIELDS = [
  ["input_tokens", "inputTokens"],
  ["output_tokens", "outputTokens"],
  ["cache_read_input_tokens", "cacheReadInputTokens"],
  ["cache_creation_input_tokens", "cacheCreationInputTokens"],
] as const;

export function noTokens(): TokenCounts {
  return { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
}

/**
 * The session's tokens so far, or undefined when the result has no modelUsage.
 * Measured on CLI 2.1.332: a result's `usage` covers only the main loop's calls
 * of that turn, while `modelUsage` is a running total per model that includes
 * every subagent, background agent and workflow agent the session ran.
 */
export function sessionTokens(result: ResultMessage): TokenCounts | undefined {
  if (result.modelUsage === undefined) return undefined;
  const totals = noTokens();
  for (const model of Object.values(result.modelUsage)) {
    for (const [snake, camel] of FIELDS) totals[snake] += model[camel] ?? 0;
  }
  return totals;
}

/**
 * The tokens a result adds to what the session had used before (`before`, its
 * running totals at the previous result). Without modelUsage, the turn's own usage.
 * A total below `before` means the CLI started counting again (a new session
 * after /clear): then all of it is new.
 */
export function tokensSince(result: ResultMessage, before: TokenCounts | undefined): TokenCounts {
  const now = sessionTokens(result);
  if (now === undefined) {
    const usage: ApiUsage = result.usage ?? {};
    const own = noTokens();
    for (const [snake] of FIELDS) own[snake] = usage[snake] ?? 0;
    return own;
  }
  if (before === undefined || FIELDS.some(([snake]) => now[snake] < before[snake])) return now;
  const added = noTokens();
  for (const [snake] of FIELDS) added[snake] = now[snake] - before[snake];
  return added;
}
