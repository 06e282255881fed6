// A session's transcript as compact one-line entries, in bounded pages a parent model can read.
import { z } from "zod";
import type { CliMessage } from "../protocol/index.ts";
import { clip } from "../util/one-line.ts";

/**
 * A session's transcript as compact entries (one line of text per message)
 * in bounded pages: raw CLI messages carry tool lists, usage and ids a parent
 * model has no use for.
 */

const MAX_ENTRY_CHARS = 2_000;
const MAX_PAGE_CHARS = 30_000;

export const TranscriptEntrySchema = z.object({
  index: z.number().describe("position in the session's transcript"),
  type: z.string(),
  text: z.string(),
});

export const TranscriptPageSchema = z.object({
  session_id: z.string(),
  entries: z.array(TranscriptEntrySchema),
  next: z.number().describe("pass as `after` to read on"),
  total: z.number().describe("messages so far"),
  more: z.boolean().describe("true when messages after this page exist"),
});

export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;
export type TranscriptPage = z.infer<typeof TranscriptPageSchema>;

type Block = Record<string, unknown>;

function blocksOf(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];
}

function blockText(block: Block): string {
  switch (block.type) {
    case "text":
      return String(block.text ?? "");
    case "tool_use":
      return `→ ${String(block.name)} ${JSON.stringify(block.input ?? {})}`;
    case "tool_result": {
      const text = blocksOf(block.content).map(blockText).join("\n");
      return `← ${block.is_error === true ? "error: " : ""}${text}`;
    }
    case "thinking":
    case "redacted_thinking":
      return "(thinking)";
    default:
      return `(${String(block.type)})`;
  }
}

/** One line of text for a message, or undefined for messages a reader does not need (stream deltas, control traffic). */
export function describeMessage(message: CliMessage): string | undefined {
  const m = message as unknown as Record<string, unknown>;
  switch (message.type) {
    case "assistant":
    case "user": {
      const inner = m.message as { content?: unknown } | undefined;
      return blocksOf(inner?.content).map(blockText).join("\n");
    }
    case "result": {
      const errors = Array.isArray(m.errors) ? m.errors.join("; ") : "";
      return `${String(m.subtype)}${m.is_error === true ? " (error)" : ""}: ${typeof m.result === "string" ? m.result : errors}`;
    }
    case "system":
      return m.subtype === "init" ? `init: model ${String(m.model)}, cwd ${String(m.cwd)}` : String(m.subtype);
    case "stream_event":
    case "keep_alive":
    case "control_request":
    case "control_response":
    case "control_cancel_request":
      return undefined;
    case "unknown":
      return undefined;
    default:
      return message.type;
  }
}

/** Entries from index `after` on, at most `limit` of them and about `maxChars` of text. */
export function transcriptPage(
  sessionId: string,
  transcript: { offset: number; messages: readonly CliMessage[] },
  after: number,
  limit: number,
  maxChars = MAX_PAGE_CHARS,
): TranscriptPage {
  const total = transcript.offset + transcript.messages.length;
  const entries: TranscriptEntry[] = [];
  let size = 0;
  let index = Math.max(after, transcript.offset);
  for (; index < total && entries.length < limit; index++) {
    const message = transcript.messages[index - transcript.offset]!;
    const text = describeMessage(message);
    if (text === undefined) continue;
    const entry = { index, type: message.type, text: clip(text, MAX_ENTRY_CHARS) };
    size += entry.text.length;
    if (size > maxChars && entries.length > 0) break;
    entries.push(entry);
  }
  return { session_id: sessionId, entries, next: index, total, more: index < total };
}

export function renderPage(page: TranscriptPage): string {
  const lines = page.entries.map((e) => `[${e.index}] ${e.type}: ${e.text}`);
  const tail = page.more ? `… more: call get_transcript with after=${page.next}` : `(end: ${page.total} messages)`;
  return [...lines, tail].join("\n");
}
