import { randomUUID } from "node:crypto";
import type { ApiUsage, CliMessage, ContentBlockParam, ResultMessage } from "../protocol/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";

export type Prompt = string | readonly ContentBlockParam[];

/** The buffered outcome of one turn. */
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
  costUsd: number;
  usage: ApiUsage;
  numTurns: number;
  durationMs: number;
  /** The turn was interrupted (an interrupt request, or SIGINT to the CLI) before it finished. */
  interrupted: boolean;
  /** What went wrong; an interrupted turn says "interrupted". */
  errors: string[];
  /** Every message of the turn, the result last. */
  messages: CliMessage[];
  result: ResultMessage;
}

export function turnResult(result: ResultMessage, messages: CliMessage[], userMessageId: string | undefined): TurnResult {
  // The CLI ends an interrupted turn with error_during_execution, terminal_reason "aborted_streaming" or "aborted_tools",
  // and its internal diagnostics ("[ede_diagnostic] result_type=user …") as the errors: no use to a person.
  const interrupted = result.is_error === true && typeof result.terminal_reason === "string" && result.terminal_reason.startsWith("aborted");
  return {
    sessionId: result.session_id ?? "",
    userMessageId,
    lastMessageId: messages.findLast((message) => message.type === "assistant")?.uuid,
    text: result.result ?? "",
    structuredOutput: result.structured_output,
    isError: result.is_error === true,
    subtype: result.subtype,
    costUsd: result.total_cost_usd ?? 0,
    usage: result.usage ?? {},
    numTurns: result.num_turns ?? 0,
    durationMs: result.duration_ms ?? 0,
    interrupted,
    errors: interrupted ? ["interrupted"] : (result.errors ?? []),
    messages,
    result,
  };
}

/**
 * One prompt and the messages the CLI answers it with, ending with its result.
 * Iterate it for the stream, or await `result` / `collect()` for the outcome.
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

  push(message: CliMessage): void {
    this.#collected.push(message);
    this.#queue.push(message);
    if (message.type === "result") {
      this.#queue.end();
      this.#resolveResult(message);
    }
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
    return turnResult(result, this.#collected, this.userMessageId);
  }
}
