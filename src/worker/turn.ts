// One turn: its messages as an AsyncIterable, and its buffered result.
import { randomUUID } from "node:crypto";
import type { ApiUsage, CliMessage, ContentBlockParam, ResultMessage } from "../protocol/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { type TokenCounts, tokensSince } from "./session-usage.ts";

export type Prompt = string | readonly ContentBlockParam[];

/**
 * The buffered outcome of one turn: the prompt and whatever the session did for it
 * until it was done, the turns the CLI started for background tasks' notifications
 * included. Text, structured output and error are the last result's.
 */
export interface TurnResult {
  sessionId: string;
  /** With file checkpointing, the id the prompt was sent with: `rewindFiles` restores files to their state at this point. */
  userMessageId: string | undefined;
  /** The uuid of the turn's last assistant message: `resumeSessionAt` keeps the conversation up to here. */
  lastMessageId: string | undefined;
  /** The final text (the result message's `result`), empty when the turn ended in error. */
  text: string;
  /** With a JSON schema: the validated structured output. */
  structuredOutput: unknown;
  isError: boolean;
  /** success, error_max_turns, error_during_execution, … */
  subtype: string;
  /** The CLI's running total for the process at the last result. */
  costUsd: number;
  /** Every model call of the turn, its subagents, background agents and workflows included (see session-usage.ts). */
  usage: ApiUsage;
  /** Model turns over all the turn's results. */
  numTurns: number;
  /** Summed over the turn's results. */
  durationMs: number;
  /** The turn was interrupted (an interrupt request, or SIGINT to the CLI) before it finished. */
  interrupted: boolean;
  /** What went wrong; an interrupted turn says "interrupted". */
  errors: string[];
  /** Every message of the turn, its last result near the end. */
  messages: CliMessage[];
  /** The last result. */
  result: ResultMessage;
}

export function turnResult(result: ResultMessage, messages: CliMessage[], userMessageId: string | undefined, tokensBefore?: TokenCounts): TurnResult {
  // The CLI ends an interrupted turn with error_during_execution, terminal_reason "aborted_streaming" or "aborted_tools",
  // and its internal diagnostics ("[ede_diagnostic] result_type=user …") as the errors: no use to a person.
  const interrupted = result.is_error === true && typeof result.terminal_reason === "string" && result.terminal_reason.startsWith("aborted");
  const results = messages.filter((message): message is ResultMessage => message.type === "result");
  if (!results.includes(result)) results.push(result);
  return {
    sessionId: result.session_id ?? "",
    userMessageId,
    lastMessageId: messages.findLast((message) => message.type === "assistant")?.uuid,
    text: result.result ?? "",
    structuredOutput: result.structured_output,
    isError: result.is_error === true,
    subtype: result.subtype,
    costUsd: result.total_cost_usd ?? 0,
    usage: result.modelUsage === undefined ? (result.usage ?? {}) : tokensSince(result, tokensBefore),
    numTurns: results.reduce((sum, each) => sum + (each.num_turns ?? 0), 0),
    durationMs: results.reduce((sum, each) => sum + (each.duration_ms ?? 0), 0),
    interrupted,
    errors: interrupted ? ["interrupted"] : (result.errors ?? []),
    messages,
    result,
  };
}

/**
 * One prompt and the messages the CLI answers it with, until the session is
 * done (the worker says when: see Worker). Iterate it for the stream, or await
 * `result` (the last result) / `collect()` for the outcome.
 */
export class Turn implements AsyncIterable<CliMessage> {
  readonly result: Promise<ResultMessage>;
  /**
   * The id the prompt is sent with when the worker keeps file checkpoints: the
   * CLI records the user message under it, so it names this point of the
   * conversation to `rewindFiles`. (A prompt with an id also makes the CLI
   * report its command_lifecycle; without checkpoints cadre spares that.)
   */
  readonly userMessageId: string | undefined;
  /** The prompt goes as text only: an `@path` in it is not read, a leading `/` is not a command. */
  readonly verbatim: boolean;
  readonly #queue = new AsyncQueue<CliMessage>();
  readonly #collected: CliMessage[] = [];
  #resolveResult!: (result: ResultMessage) => void;
  #rejectResult!: (error: unknown) => void;
  #iterated = false;
  #lastResult: ResultMessage | undefined;
  /** The session's running token totals when the turn started (set by the worker). */
  tokensBefore: TokenCounts | undefined;

  constructor(
    readonly prompt: Prompt,
    readonly signal: AbortSignal | undefined,
    options: { named?: boolean; verbatim?: boolean } = {},
  ) {
    this.verbatim = options.verbatim === true;
    this.userMessageId = options.named ? randomUUID() : undefined;
    this.result = new Promise((resolve, reject) => {
      this.#resolveResult = resolve;
      this.#rejectResult = reject;
    });
    // The result is also delivered through iteration; an unobserved rejection is not a crash.
    this.result.catch(() => {});
  }

  get finished(): boolean {
    return this.#queue.closed;
  }

  /** The latest result so far; the turn may go on (a background task's notification starts another). */
  get lastResult(): ResultMessage | undefined {
    return this.#lastResult;
  }

  push(message: CliMessage): void {
    this.#collected.push(message);
    this.#queue.push(message);
    if (message.type === "result") this.#lastResult = message;
  }

  /** The session is done: the turn ends with its last result. */
  finish(): void {
    if (this.finished || this.#lastResult === undefined) return;
    this.#queue.end();
    this.#resolveResult(this.#lastResult);
  }

  fail(error: unknown): void {
    if (this.finished) return;
    this.#queue.fail(error);
    this.#rejectResult(error);
  }

  [Symbol.asyncIterator](): AsyncIterator<CliMessage> {
    if (this.#iterated) throw new Error("a turn's messages can be iterated only once; use collect() for the buffered result");
    this.#iterated = true;
    return this.#queue[Symbol.asyncIterator]();
  }

  async collect(): Promise<TurnResult> {
    const result = await this.result;
    return turnResult(result, this.#collected, this.userMessageId, this.tokensBefore);
  }
}
