// What a failure is: rate limits, whether a retry is safe, a turn's failure and an error's summary.
import type { CliMessage, ResultMessage } from "../protocol/index.ts";
import type { TurnResult } from "../worker/index.ts";
import { ProtocolError, WorkerExitedError } from "../worker/index.ts";
import { BudgetExceededError, StructuredOutputError, TaskFailedError, TaskInterruptedError } from "./errors.ts";

const RATE_LIMIT_STATUSES = new Set([429, 529]);
const TRANSIENT_STATUSES = new Set([429, 500, 502, 503, 504, 529]);

export function isRateLimitStatus(status: number | null | undefined): boolean {
  return status !== null && status !== undefined && RATE_LIMIT_STATUSES.has(status);
}

/** Whether any tool started in these messages: after that, a retry could repeat side effects. */
export function anyToolRan(messages: readonly CliMessage[]): boolean {
  return messages.some((m) => m.type === "assistant" && Array.isArray(m.message.content) && m.message.content.some((b) => b.type === "tool_use"));
}

/**
 * Transient failures are worth another attempt: rate limits, overload and
 * server errors, and a crash before any tool ran. Never a success, a permanent
 * error (max turns, bad config, an unknown agent) or a crash after tools ran.
 */
export function isRetryable(error: unknown, messagesOfAttempt: readonly CliMessage[]): boolean {
  if (error instanceof TaskFailedError) {
    return error.apiErrorStatus !== undefined && TRANSIENT_STATUSES.has(error.apiErrorStatus);
  }
  if (error instanceof WorkerExitedError || error instanceof ProtocolError) return !anyToolRan(messagesOfAttempt);
  return false;
}

/**
 * Why a finished turn failed its task, or undefined when it did not: an
 * interruption, an error result, or (with an output schema) no answer in the
 * schema's shape.
 */
export function turnFailure(turn: TurnResult, expectsStructuredOutput: boolean): Error | undefined {
  if (turn.interrupted) return new TaskInterruptedError();
  if (turn.isError) {
    const details = turn.errors.length > 0 ? turn.errors : [turn.text].filter(Boolean);
    if (turn.subtype === "error_max_structured_output_retries") return new StructuredOutputError("invalid", details.join("; "));
    const status = (turn.result as ResultMessage).api_error_status ?? undefined;
    return new TaskFailedError(turn.subtype, details, status);
  }
  if (expectsStructuredOutput && turn.structuredOutput === undefined) return new StructuredOutputError("missing", turn.text);
  return undefined;
}

export function errorSummary(error: unknown): { code: string; message: string; budget?: string } {
  if (error instanceof BudgetExceededError) return { code: error.code, message: error.message, budget: error.budget };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === "string" ? code : "ERROR", message: error.message };
  }
  return { code: "ERROR", message: String(error) };
}
