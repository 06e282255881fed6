// The run's replies.jsonl: each worker's model replies and the tool results and prompts they answered, as a replay needs them.
import { createWriteStream, type WriteStream } from "node:fs";
import type { CliMessage, RepliesLine } from "../protocol/index.ts";
import { contentText, encodeLine, seen } from "../protocol/index.ts";
import { sessionIdOf } from "./session-records.ts";

/**
 * Appends a compact line per model reply (its content blocks as the model
 * sent them), per batch of tool results sent back (a digest and an excerpt
 * of each, not the output itself) and per task prompt, for every task,
 * round, copy, child, peer and supervisor session. The transcripts hold all
 * of it and much more; this file is what `cadre replay` reads.
 */
export class ReplyLog {
  readonly #stream: WriteStream;
  /** Prompts sent by task attempts whose session is not known yet, by task id. */
  readonly #prompts = new Map<string, string>();

  constructor(path: string, header: { runId: string }) {
    this.#stream = createWriteStream(path, { flags: "a" });
    // A full disk must not end the run: the replay of such a run finds lines missing and says so.
    this.#stream.on("error", () => {});
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

  #append(line: RepliesLine): void {
    this.#stream.write(encodeLine(line));
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stream.closed) return resolve();
      this.#stream.once("close", () => resolve());
      this.#stream.end();
    });
  }
}
