// The Messages API's two response encodings: server-sent events when streaming, one JSON message otherwise.
import type { CacheUsage } from "./prompt-cache.ts";
import { estimateTokens, isText, isThinking, isToolUse, type Reply, replyChars } from "./reply.ts";

/**
 * The two response encodings of the Messages API: server-sent events when
 * the request says `stream: true` (what the CLI always asks for), and one
 * JSON message otherwise.
 */

export interface MessageMeta {
  id: string;
  model: string;
  /** The input side: plain and cached input tokens. */
  usage: CacheUsage;
}

/** One SSE frame; `delta` frames are the ones a slow step spaces out. */
export interface SseFrame {
  data: string;
  delta: boolean;
}

export function sseFrame(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

/** Word by word (whitespace kept with the word before it) or in a few larger pieces. */
export function splitText(text: string, byWord: boolean): string[] {
  if (text === "") return [];
  if (byWord) return text.match(/\s*\S+\s*/g) ?? [text];
  const size = Math.min(4096, Math.max(16, Math.ceil(text.length / 3)));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** Tool input JSON cut into up to three partial_json pieces, as the API streams it. */
export function splitJson(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 3));
  const pieces: string[] = [];
  for (let at = 0; at < json.length; at += size) pieces.push(json.slice(at, at + size));
  return pieces;
}

function usage(input: CacheUsage, outputTokens: number): Record<string, unknown> {
  return { ...input, cache_creation: { ...input.cache_creation }, output_tokens: outputTokens };
}

export function* sseFrames(reply: Reply, meta: MessageMeta, byWord: boolean): Generator<SseFrame> {
  const frame = (type: string, payload: Record<string, unknown>, delta = false): SseFrame => ({
    data: sseFrame(type, payload),
    delta,
  });
  yield frame("message_start", {
    message: {
      id: meta.id,
      type: "message",
      role: "assistant",
      model: meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usage(meta.usage, 1),
    },
  });
  for (const [index, block] of reply.content.entries()) {
    if (isText(block)) {
      yield frame("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const text of splitText(block.text, byWord)) {
        yield frame("content_block_delta", { index, delta: { type: "text_delta", text } }, true);
      }
    } else if (isToolUse(block)) {
      yield frame("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const partial_json of splitJson(JSON.stringify(block.input))) {
        yield frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } }, true);
      }
    } else if (isThinking(block)) {
      yield frame("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const thinking of splitText(block.thinking, byWord)) {
        yield frame("content_block_delta", { index, delta: { type: "thinking_delta", thinking } }, true);
      }
      yield frame("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature ?? "" } });
    } else {
      // A block of another type (redacted thinking, …) arrives whole in its start event, as the API sends those.
      yield frame("content_block_start", { index, content_block: block });
    }
    yield frame("content_block_stop", { index });
  }
  yield frame("message_delta", {
    delta: { stop_reason: reply.stopReason, stop_sequence: null },
    usage: usage(meta.usage, estimateTokens(replyChars(reply))),
  });
  yield frame("message_stop", {});
}

/** The non-streaming response body. */
export function messageJson(reply: Reply, meta: MessageMeta): Record<string, unknown> {
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: reply.content,
    stop_reason: reply.stopReason,
    stop_sequence: null,
    usage: usage(meta.usage, estimateTokens(replyChars(reply))),
  };
}
