/**
 * The attribute names of cadre's spans and metrics: the OpenTelemetry GenAI
 * semantic conventions where one fits, cadre.* for the rest (one place, so
 * that docs/telemetry.md's table and the code say the same).
 */
import type { Attributes } from "@opentelemetry/api";
import type { TaskResult, Usage } from "../orchestrator/index.ts";
import type { Summary } from "../run/index.ts";

export const GEN_AI_SYSTEM = "gen_ai.system";
export const GEN_AI_OPERATION = "gen_ai.operation.name";
export const GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const GEN_AI_RESPONSE_ID = "gen_ai.response.id";
export const GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
export const GEN_AI_TOOL_ARGUMENTS = "gen_ai.tool.call.arguments";
export const GEN_AI_TOOL_RESULT = "gen_ai.tool.call.result";
export const GEN_AI_TOKEN_TYPE = "gen_ai.token.type";

/** Claude is Anthropic's. */
export const ANTHROPIC = "anthropic";

/** Token counts as the GenAI conventions name them (cache reads and writes included). */
export function usageAttributes(usage: Usage): Attributes {
  return {
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
    "gen_ai.usage.cache_read.input_tokens": usage.cacheReadInputTokens,
    "gen_ai.usage.cache_creation.input_tokens": usage.cacheCreationInputTokens,
  };
}

/** What a task's span says of its result: the same numbers as summary.json. */
export function resultAttributes(result: TaskResult): Attributes {
  return {
    "cadre.status": result.status,
    "cadre.cost_usd": result.costUsd,
    "cadre.num_turns": result.numTurns,
    "cadre.attempts": result.attempts,
    "cadre.queued_ms": result.queuedMs,
    ...usageAttributes(result.usage),
    ...(result.sessionId !== undefined && { [GEN_AI_CONVERSATION_ID]: result.sessionId }),
    ...(result.error && { "error.type": result.error.code, "cadre.error_code": result.error.code }),
    ...(result.error?.budget !== undefined && { "cadre.budget": result.error.budget }),
  };
}

/** What the span of a task an agent posted says of where it came from: as its summary.json row has it (`posted_by`, `post_depth`). */
export function postedAttributes(posted: { by: string; depth: number }): Attributes {
  return { "cadre.posted_by": posted.by, "cadre.post_depth": posted.depth };
}

/** What a run's span says of its record at the end: the totals as summary.json has them. */
export function recordAttributes(summary: Summary): Attributes {
  const { totals } = summary;
  return {
    "cadre.cost_usd": totals.cost_usd,
    "cadre.num_turns": totals.num_turns,
    "cadre.exit_code": summary.exit_code,
    "cadre.tasks.succeeded": totals.succeeded,
    "cadre.tasks.failed": totals.failed,
    ...usageAttributes({
      inputTokens: totals.usage.input_tokens,
      outputTokens: totals.usage.output_tokens,
      cacheReadInputTokens: totals.usage.cache_read_input_tokens,
      cacheCreationInputTokens: totals.usage.cache_creation_input_tokens,
    }),
  };
}

/** The longest text an attribute carries (content opt-in only); longer ones are clipped. */
export const CONTENT_MAX = 8_192;
