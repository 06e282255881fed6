// The run's replies.jsonl: each worker's model replies and the tool results and prompts they answered, as a replay needs them.
import type { CliMessage, RepliesLine } from "../protocol/index.ts";
import { contentText, encodeLine, seen } from "../protocol/index.ts";
import { AppendedLines } from "../util/appended-lines.ts";
import { sessionIdOf } from "./session-records.ts";

/**
 * Appends a compact line per model reply (its content blocks as the model
 * sent them), per batch of tool results sent back (a digest and an excerpt
 * of each, not the output itself) and per task prompt, for every task,
 * round, copy, child, peer and supervisor session. The transcripts hold all
 * of it and much more; this file is what `cadre replay` reads. Each line is
 * written as it comes, in one write: a run killed at once (a second Ctrl-C,
 * a process.exit) keeps every reply it had.
 */
export class ReplyLog {
  /** Undefined when the file cannot be opened: a full disk or a missing directory must not end the run (a replay of it says the file is missing). */
  readonly #lines: AppendedLines | undefined;
  /** Prompts sent by task attempts whose session is not known yet, by task id. */
  readonly #prompts = new Map<string, string>();

  constructor(path: string, header: { runId: string }) {
    try {
      this.#lines = new AppendedLines(path);
    } catch {
      this.#lines = undefined;
    }
    this.#append({ replies: 1, run_id: header.runId });
  }

  /** A task's attempt sends its prompt: written with the session it goes to, which its first message names. */
  prompt(id: string, prompt: string): void {
    this.#prompts.set(id, prompt);
  }

  /** A message from the worker of task or session `id`: replies and tool results are kept, the rest is not. */
  message(id: string, name: string, message: CliMessage): void {
    const session = sessionIdOf(message);
    if (session === undefined) return;
    const prompt = this.#prompts.get(id);
    if (prompt !== undefined) {
      this.#prompts.delete(id);
      this.#append({ name, session, prompt: seen(prompt) });
    }
    if (message.type !== "assistant" && message.type !== "user") return;
    const agent = message.parent_tool_use_id ?? undefined;
    const owner = { name, session, ...(agent !== undefined && { agent }) };
    if (message.type === "assistant") {
      // An API error arrives as a synthetic assistant message: the model said nothing.
      if (message.error !== undefined || message.message.model === "<synthetic>") return;
      const id = typeof message.message.id === "string" ? message.message.id : "";
      this.#append({ ...owner, reply: { id, content: message.message.content as { type: string }[] } });
      return;
    }
    if (message.isReplay === true || !Array.isArray(message.message.content)) return;
    const results = message.message.content.flatMap((block) =>
      block.type === "tool_result"
        ? [{ id: block.tool_use_id, ...seen(contentText(block.content)), ...(block.is_error === true && { is_error: true }) }]
        : [],
    );
    if (results.length > 0) this.#append({ ...owner, tool_results: results });
  }

  // A line that cannot be written (a full disk) is lost: the replay of such a run finds it missing and says so.
  #append(line: RepliesLine): void {
    this.#lines?.append(encodeLine(line).slice(0, -1));
  }

  /** Syncs and closes the file. */
  close(): Promise<void> {
    this.#lines?.close();
    return Promise.resolve();
  }
}
