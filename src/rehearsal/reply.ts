// What the scripted model answers for one step: the content blocks of one assistant message.
import type { RehearsalStep } from "./script.ts";
import { renderDeep, renderTemplate, type TemplateContext } from "./template.ts";

/** What the scripted model answers: the content blocks of one assistant message (a replayed reply may hold thinking, or blocks of other types, as recorded). */
export type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "thinking"; thinking: string; signature?: string }
  | { type: string; [key: string]: unknown };

export interface Reply {
  content: ReplyBlock[];
  stopReason: string;
}

/** Exactly `length` characters of numbered lines, so truncation is visible. */
export function longText(length: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < length; n++) {
    const label = `line ${String(n).padStart(6, "0")} of rehearsal long text `;
    const line = `${label.padEnd(79, ".")}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("").slice(0, length);
}

/** Renders a step's templates into the blocks the model "says". */
export function buildReply(step: RehearsalStep, context: TemplateContext, nextToolId: () => string): Reply {
  if (step.content !== undefined) {
    const calls = step.content.some((block) => block.type === "tool_use");
    return { content: step.content as ReplyBlock[], stopReason: step.stop_reason ?? (calls ? "tool_use" : "end_turn") };
  }
  const content: ReplyBlock[] = [];
  const parts: string[] = [];
  if (step.text !== undefined) parts.push(renderTemplate(step.text, context));
  if (step.long_text !== undefined) parts.push(longText(step.long_text));
  if (parts.length > 0) content.push({ type: "text", text: parts.join("\n") });

  const toolUses = step.tool_uses ?? (step.tool_use ? [step.tool_use] : []);
  for (const toolUse of toolUses) {
    content.push({
      type: "tool_use",
      id: toolUse.id ?? nextToolId(),
      name: toolUse.name,
      input: renderDeep(toolUse.input, context) as Record<string, unknown>,
    });
  }
  return { content, stopReason: step.stop_reason ?? (toolUses.length > 0 ? "tool_use" : "end_turn") };
}

export function textReply(text: string): Reply {
  return { content: [{ type: "text", text }], stopReason: "end_turn" };
}

/** About four characters per token, as for English text; never zero. */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

export function replyChars(reply: Reply): number {
  let chars = 0;
  for (const block of reply.content) chars += isText(block) ? block.text.length : JSON.stringify(isToolUse(block) ? block.input : block).length;
  return chars;
}

export function isText(block: ReplyBlock): block is { type: "text"; text: string } {
  return block.type === "text" && typeof block.text === "string";
}

export function isToolUse(block: ReplyBlock): block is { type: "tool_use"; id: string; name: string; input: Record<string, unknown> } {
  return block.type === "tool_use";
}

export function isThinking(block: ReplyBlock): block is { type: "thinking"; thinking: string; signature?: string } {
  return block.type === "thinking" && typeof block.thinking === "string";
}
