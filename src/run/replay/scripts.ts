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
import type { RehearsalScripts, RehearsalStep } from "../../rehearsal/index.ts";

/** What a run's replies.jsonl holds, as scripts by session name. */
export interface RecordedReplies {
  /** The recorded run's id (its first header line). */
  runId: string;
  /**
   * Script name → the replies of the conversation that name worked in, by
   * position: a task, round, copy, child or "peer:<agent>" plays its own, a
   * round that continued its session plays the whole session (its turns are
   * numbered from the session's start), and "<name>:subagent" a task's one
   * subagent.
   */
  scripts: RehearsalScripts;
  /** What the record holds but a replay cannot serve (a session's several subagents at once). */
  unserved: string[];
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
  const mainOf = new Map<string, string>();
  const subagentsOf = new Map<string, Set<string>>();
  /** Prompts sent by tasks whose first reply is still to come. */
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
        prompts.set(prompt.name, prompt.prompt);
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
    if (owner.agent === undefined) mainOf.set(owner.name, key);
    else subagentsOf.set(owner.name, (subagentsOf.get(owner.name) ?? new Set()).add(key));
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
    const prompt = owner.agent === undefined ? prompts.get(owner.name) : undefined;
    if (prompt !== undefined) prompts.delete(owner.name);
    const toolResults = conversation.toolResults;
    conversation.toolResults = [];
    conversation.lastReplyId = reply.id;
    conversation.steps.push({
      content,
      // Always the tool results, none included: a request that brings one the record lacks has diverged too.
      expect: { ...(prompt && { prompt }), tool_results: toolResults },
    } as RehearsalStep);
  }
  const scripts: RehearsalScripts = {};
  for (const [name, key] of mainOf) scripts[name] = conversations.get(key)!.steps;
  const unserved: string[] = [];
  for (const [name, keys] of subagentsOf) {
    if (keys.size === 1) scripts[`${name}:subagent`] = conversations.get([...keys][0]!)!.steps;
    else unserved.push(`${name} ran ${keys.size} subagents: a replay serves one subagent per session, so its subagents diverge`);
  }
  return { runId, scripts, unserved };
}
