import type { ResultMessage } from "../protocol/index.ts";
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

/**
 * Cost of one worker process. The CLI reports `total_cost_usd` as a running
 * total for the process, so each result adds only what is new.
 */
export class WorkerCost {
  private reportedTotal = 0;

  /** The cost this result adds. */
  add(result: ResultMessage): number {
    const total = num(result.total_cost_usd);
    const delta = Math.max(0, total - this.reportedTotal);
    this.reportedTotal = Math.max(this.reportedTotal, total);
    return delta;
  }
}
