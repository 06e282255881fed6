// A run's replies.jsonl read back as the scripts a replay serves: per session, its recorded replies with what each one answered.
import {
  PromptLineSchema,
  type RecordedToolResult,
  RepliesHeaderSchema,
  type ReplyLine,
  ReplyLineSchema,
  type Seen,
  type ToolResultsLine,
  ToolResultsLineSchema,
} from "../../orchestrator/index.ts";
import type { RecordedConversations, RehearsalStep } from "../../rehearsal/index.ts";

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

/** Reads replies.jsonl's text; a line that does not parse (a run killed mid-write) ends what can be trusted. */
export function readRecordedReplies(text: string): RecordedReplies {
  const conversations = new Map<string, Conversation>();
  const mainOf = new Map<string, Set<string>>();
  const subagentsOf = new Map<string, Set<string>>();
  /** Prompts sent into main conversations whose next reply is still to come, by conversation. */
  const prompts = new Map<string, Seen>();
  let runId = "";
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    let line: { reply: ReplyLine } | { results: ToolResultsLine };
    try {
      const value = JSON.parse(raw) as Record<string, unknown>;
      if ("replies" in value) {
        runId ||= RepliesHeaderSchema.parse(value).run_id;
        continue;
      }
      if ("prompt" in value) {
        const prompt = PromptLineSchema.parse(value);
        prompts.set(`${prompt.session}\0`, prompt.prompt);
        continue;
      }
      line = "tool_results" in value ? { results: ToolResultsLineSchema.parse(value) } : { reply: ReplyLineSchema.parse(value) };
    } catch {
      break;
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
    conversations: Object.fromEntries([...mainOf].map(([name, keys]) => [name, steps(keys)])),
    subagents: Object.fromEntries([...subagentsOf].map(([name, keys]) => [name, steps(keys)])),
  };
}
