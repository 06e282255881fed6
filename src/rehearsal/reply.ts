import type { RehearsalStep } from "./script.ts";
import { renderDeep, renderTemplate, type TemplateContext } from "./template.ts";

/** What the scripted model answers: the content blocks of one assistant message. */
export type ReplyBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

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
  for (const block of reply.content) chars += block.type === "text" ? block.text.length : JSON.stringify(block.input).length;
  return chars;
}
