/**
 * replies.jsonl, a run's record of what the model said, per session, so that a
 * replay can serve it again: its line schema, and the one digest of what the
 * model was given that the recording side (stream-json) and the serving side
 * (a Messages API request) both compute, so that a replay sees a difference.
 */
import { createHash } from "node:crypto";
import { z } from "zod";

/** The file, in the run directory beside summary.json. */
export const REPLIES_FILE = "replies.jsonl";

/** What the model was given, as a digest (to compare) and an excerpt of its text (to report). */
export const SeenSchema = z.looseObject({
  digest: z.string().describe("A digest of the text as the model saw it (reminders and spawn_worker's ids and costs left out), to compare."),
  excerpt: z.string().describe("That text, to report: whole when short, else its start and its end (where a filled-in prompt differs)."),
});
export type Seen = z.infer<typeof SeenSchema>;

export const RecordedToolResultSchema = SeenSchema.extend({
  id: z.string().describe("The tool_use id the result answers."),
  is_error: z.boolean().optional().describe("The tool result was an error."),
});
export type RecordedToolResult = z.infer<typeof RecordedToolResultSchema>;

/** A reply block as the model sent it: text, tool_use, thinking, or one the CLI adds later (kept as is). */
export const ReplyBlockSchema = z.looseObject({
  type: z.string().describe('The block\'s type: "text", "tool_use", "thinking", …; its other fields as the Messages API has them.'),
});

const Owner = {
  /** The task, round, copy, child or session ("peer:critic") the worker worked for. */
  name: z.string(),
  /** The CLI's session id: a session continued across rounds keeps it. */
  session: z.string(),
  /** Set for a subagent's (Agent tool) messages: the tool_use that started it. */
  agent: z.string().optional(),
};

/** One assistant message of the stream (the CLI emits one per content block; lines with the same id are one reply). */
export const ReplyLineSchema = z.looseObject({ ...Owner, reply: z.looseObject({ id: z.string(), content: z.array(ReplyBlockSchema) }) });
/** The tool results the CLI sent back to the model after a reply. */
export const ToolResultsLineSchema = z.looseObject({ ...Owner, tool_results: z.array(RecordedToolResultSchema) });
/** The prompt a task's attempt sent, written as its session becomes known. */
export const PromptLineSchema = z.looseObject({ name: z.string(), session: z.string(), prompt: SeenSchema });
/** The first line: what was recorded. */
export const RepliesHeaderSchema = z.looseObject({ replies: z.literal(1), run_id: z.string(), swarm: z.string().optional() });

export const RepliesLineSchema = z.union([ReplyLineSchema, ToolResultsLineSchema, PromptLineSchema, RepliesHeaderSchema]);
export type ReplyLine = z.infer<typeof ReplyLineSchema>;
export type ToolResultsLine = z.infer<typeof ToolResultsLineSchema>;
export type PromptLine = z.infer<typeof PromptLineSchema>;
export type RepliesHeader = z.infer<typeof RepliesHeaderSchema>;
export type RepliesLine = z.infer<typeof RepliesLineSchema>;

const EXCERPT_CHARS = 120;
/** A longer text keeps this much of each end: a prompt framed or filled from results differs at its end more often than at its start. */
const EXCERPT_END_CHARS = 60;
// The CLI injects context into what it sends (reminders); it is not what the tool or the user said.
const SYSTEM_REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;
// What cadre's own spawn_worker answers with that differs every run however faithful the replay: the child's
// task id, and its cost (a replay's is simulated). The answer itself is compared.
const VOLATILE = /"(task_id)":"[^"]*"|"(cost_usd)":-?[\d.e+-]+/g;

/** The text of a tool_result's or a user message's content: a string, or its text blocks joined (other blocks by their type). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: unknown; text?: unknown }) =>
      block?.type === "text" && typeof block.text === "string" ? block.text : `[${String(block?.type)}]`,
    )
    .join("\n");
}

/** The digest and excerpt of a text as the model saw it: reminders and spawn_worker's ids and costs left out, whitespace at the ends trimmed; the excerpt of a long one is its two ends. */
export function seen(text: string): Seen {
  const normalized = text.replace(SYSTEM_REMINDER, "").replace(VOLATILE, '"$1$2":…').trim();
  return {
    digest: createHash("sha256").update(normalized).digest("hex").slice(0, 16),
    excerpt: normalized.length > EXCERPT_CHARS ? `${normalized.slice(0, EXCERPT_END_CHARS)}…${normalized.slice(-EXCERPT_END_CHARS)}` : normalized,
  };
}
