// A run's replies.jsonl read back as the scripts a replay serves: per session, its recorded replies with what each one answered.
import {
  type PromptLine,
  PromptLineSchema,
  REPLIES_FILE,
  type RecordedToolResult,
  RepliesHeaderSchema,
  type ReplyLine,
  ReplyLineSchema,
  type Seen,
  type ToolResultsLine,
  ToolResultsLineSchema,
} from "../../orchestrator/index.ts";
import type { RecordedConversations, RehearsalStep } from "../../rehearsal/index.ts";
import { readJsonLines } from "../record/json-lines.ts";

/** What a run's replies.jsonl holds: the run's id, and its conversations by who held them. */
export interface RecordedReplies extends RecordedConversations {
  /** The recorded run's id (its first header line). */
  runId: string;
}

interface Conversation {
  steps: RehearsalStep[];
  lastReplyId: string | undefined;
  /** Tool results since the last reply, which the next reply answers. */
  toolResults: RecordedToolResult[];
}

/** One line of replies.jsonl, by what it holds. */
type RepliesLine = { header: string } | { prompt: PromptLine } | { reply: ReplyLine } | { results: ToolResultsLine };

function repliesLine(value: unknown): RepliesLine {
  const line = value as Record<string, unknown>;
  if (typeof line !== "object" || line === null) throw new Error("not an object");
  if ("replies" in line) return { header: RepliesHeaderSchema.parse(line).run_id };
  if ("prompt" in line) return { prompt: PromptLineSchema.parse(line) };
  return "tool_results" in line ? { results: ToolResultsLineSchema.parse(line) } : { reply: ReplyLineSchema.parse(line) };
}

/** Reads replies.jsonl's text; a line that does not parse (a run killed mid-write, a corrupt line) is named in `unreadable`, and the lines after it are still read. */
export function readRecordedReplies(text: string): RecordedReplies {
  const conversations = new Map<string, Conversation>();
  const mainOf = new Map<string, Set<string>>();
  const subagentsOf = new Map<string, Set<string>>();
  /** Prompts sent into main conversations whose next reply is still to come, by conversation. */
  const prompts = new Map<string, Seen>();
  let runId = "";
  const { values, unreadable } = readJsonLines(text, REPLIES_FILE, repliesLine);
  for (const line of values) {
    if ("header" in line) {
      runId ||= line.header;
      continue;
    }
    if ("prompt" in line) {
      prompts.set(`${line.prompt.session}\0`, line.prompt.prompt);
      continue;
    }
    const owner = "reply" in line ? line.reply : line.results;
    const key = `${owner.session}\0${owner.agent ?? ""}`;
    let conversation = conversations.get(key);
    if (conversation === undefined) {
      conversation = { steps: [], lastReplyId: undefined, toolResults: [] };
      conversations.set(key, conversation);
    }
    const of = owner.agent === undefined ? mainOf : subagentsOf;
    of.set(owner.name, (of.get(owner.name) ?? new Set()).add(key));
    if ("results" in line) {
      conversation.toolResults.push(...line.results.tool_results);
      continue;
    }
    const { reply } = line.reply;
    const content = reply.content;
    const last = conversation.steps.at(-1);
    // The CLI streams one assistant message per content block: blocks of one reply share its id.
    if (last !== undefined && reply.id !== "" && reply.id === conversation.lastReplyId) {
      last.content = [...(last.content ?? []), ...content];
      continue;
    }
    const prompt = prompts.get(key);
    prompts.delete(key);
    const toolResults = conversation.toolResults;
    conversation.toolResults = [];
    conversation.lastReplyId = reply.id;
    conversation.steps.push({
      content,
      // Always the tool results, none included: a request that brings one the record lacks has diverged too.
      expect: { ...(prompt && { prompt }), tool_results: toolResults },
    } as RehearsalStep);
  }
  // A name's conversations in the order they began: its attempts, or the children a task spawned under one name.
  const steps = (keys: Set<string>) => [...keys].map((key) => conversations.get(key)!.steps);
  return {
    runId,
    ...(unreadable.length > 0 && { unreadable }),
    conversations: Object.fromEntries([...mainOf].map(([name, keys]) => [name, steps(keys)])),
    subagents: Object.fromEntries([...subagentsOf].map(([name, keys]) => [name, steps(keys)])),
  };
}
