// The conversation of a task or session as the page shows it, built from its transcript and the orchestrator's events.
import { PEER_SERVER_NAME } from "../orchestrator/index.ts";
import type { CliMessage } from "../protocol/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { clip, oneLine } from "../util/one-line.ts";
import { askUserQuestion, planReview } from "../worker/index.ts";

/**
 * The conversation of one task or session as the page shows it: what the
 * model said, the tools it called with their input and result, peer
 * questions, hook outcomes, permission requests and the turn's result. Built
 * from the messages cadre writes to the task's transcript (live from the
 * orchestrator's events, or read back from the JSONL file), plus the
 * orchestrator's own events about the task. Long texts are cut: the page is
 * for following along; the transcript file keeps everything.
 */

const MAX_TEXT_CHARS = 20_000;
const MAX_TOOL_CHARS = 8_000;
/** Entries kept per conversation; older ones are dropped (the transcript file has them). */
const MAX_CONVERSATION_ENTRIES = 2_000;

type Shown =
  | { kind: "text"; text: string }
  | { kind: "thinking"; text: string }
  | { kind: "tool_call"; id: string; name: string; input: string; peer?: { name: string; text: string; asks: boolean } }
  | { kind: "tool_result"; id: string; text: string; isError: boolean }
  | { kind: "hook"; name: string; outcome: string; text: string }
  | { kind: "permission"; requestId: string; toolName: string; ask: string; input: string }
  | { kind: "permission_settled"; requestId: string }
  | { kind: "result"; text: string; isError: boolean; costUsd: number | null; turns: number | null }
  | { kind: "note"; text: string };

/** One entry: `seq` numbers it within its conversation (the SSE event id); `sub` marks a subagent's. */
export type ConversationEntry = Shown & { seq: number; at: number | null; sub?: boolean };

/** Where the rest of a clipped text is. */
const IN_TRANSCRIPT = " in the transcript";

type Block = Record<string, unknown>;

function blocksOf(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];
}

function resultText(content: unknown): string {
  return blocksOf(content)
    .map((b) => (typeof b.text === "string" ? b.text : `(${String(b.type)})`))
    .join("\n");
}

/** ask_peer and tell_peer: who is asked or told what. */
function peerCall(name: string, input: Record<string, unknown>): { name: string; text: string; asks: boolean } | undefined {
  const prefix = `mcp__${PEER_SERVER_NAME}__`;
  if (name !== `${prefix}ask_peer` && name !== `${prefix}tell_peer`) return undefined;
  const asks = name.endsWith("ask_peer");
  return { name: String(input.peer ?? "?"), text: String((asks ? input.question : input.message) ?? ""), asks };
}

/** What a message from the CLI shows; nothing for messages a reader does not need (init details, stream deltas). */
export function entriesOf(message: CliMessage): Shown[] {
  switch (message.type) {
    case "assistant":
      return message.message.content.flatMap((block): Shown[] => {
        if (block.type === "text") return block.text.trim() === "" ? [] : [{ kind: "text", text: clip(block.text, MAX_TEXT_CHARS, IN_TRANSCRIPT) }];
        if (block.type === "thinking") return [{ kind: "thinking", text: clip(block.thinking, MAX_TEXT_CHARS, IN_TRANSCRIPT) }];
        if (block.type === "tool_use") {
          const peer = peerCall(block.name, block.input);
          const input = clip(JSON.stringify(block.input, null, 2), MAX_TOOL_CHARS, IN_TRANSCRIPT);
          return [{ kind: "tool_call", id: block.id, name: block.name, input, ...(peer && { peer }) }];
        }
        return [];
      });
    case "user":
      return blocksOf(message.message.content).flatMap((block): Shown[] =>
        block.type === "tool_result"
          ? [
              {
                kind: "tool_result",
                id: String(block.tool_use_id),
                text: clip(resultText(block.content), MAX_TOOL_CHARS, IN_TRANSCRIPT),
                isError: block.is_error === true,
              },
            ]
          : [],
      );
    case "result": {
      const text = message.result ?? (message.errors ?? []).join("; ");
      const isError = message.is_error === true || message.subtype !== "success";
      return [
        {
          kind: "result",
          text: clip(text, MAX_TEXT_CHARS, IN_TRANSCRIPT),
          isError,
          costUsd: message.total_cost_usd ?? null,
          turns: message.num_turns ?? null,
        },
      ];
    }
    case "system":
      return systemEntries(message);
    default:
      return [];
  }
}

function systemEntries(message: Extract<CliMessage, { type: "system" }>): Shown[] {
  const m = message as Record<string, unknown>;
  switch (message.subtype) {
    case "init":
      return [{ kind: "note", text: `session started: model ${String(m.model)}, in ${String(m.cwd)}` }];
    case "api_retry":
      return [{ kind: "note", text: `API ${String(m.error_status ?? m.error)}: retry ${String(m.attempt)} of ${String(m.max_retries)}` }];
    case "hook_response": {
      const text = [m.output, m.stdout, m.stderr].find((t): t is string => typeof t === "string" && t.trim() !== "") ?? "";
      return [
        {
          kind: "hook",
          name: String(m.hook_name),
          outcome: String(m.outcome ?? `exit ${String(m.exit_code)}`),
          text: clip(text, MAX_TOOL_CHARS, IN_TRANSCRIPT),
        },
      ];
    }
    case "compact_boundary":
      return [{ kind: "note", text: "the conversation was compacted" }];
    default:
      return [];
  }
}

/** What a permission request asks, in words (a question's text, a plan, or the tool call), and its input. */
export function describePermission(request: { toolName: string; input: Record<string, unknown> }): {
  kind: "tool" | "question" | "plan";
  ask: string;
  input: string;
  questions?: { question: string; options: string[]; multiSelect: boolean }[];
} {
  const input = clip(JSON.stringify(request.input, null, 2), MAX_TOOL_CHARS, IN_TRANSCRIPT);
  if (askUserQuestion.matches(request)) {
    const questions = askUserQuestion.questions(request).map((q) => ({
      question: q.question,
      options: (q.options ?? []).map((o) => o.label),
      multiSelect: q.multiSelect === true,
    }));
    return { kind: "question", ask: `answer: ${questions.map((q) => q.question).join(" / ")}`, input, questions };
  }
  if (planReview.matches(request)) return { kind: "plan", ask: "approve its plan", input };
  return { kind: "tool", ask: `use ${request.toolName}`, input };
}

export function permissionEntry(requestId: string, request: { toolName: string; input: Record<string, unknown> }): Shown {
  const { ask, input } = describePermission(request);
  return { kind: "permission", requestId, toolName: request.toolName, ask, input };
}

function isSubagent(message: CliMessage): boolean {
  const parent = (message as { parent_tool_use_id?: unknown }).parent_tool_use_id;
  return typeof parent === "string";
}

/** What a conversation's listeners hear: each new entry, then once that it has ended. */
export type ConversationEvent = { type: "entry"; entry: ConversationEntry } | { type: "end" };

/** The entries of one conversation so far, and a feed of the next ones. */
export class Conversation {
  readonly #entries: ConversationEntry[] = [];
  readonly #events = new EventHub<ConversationEvent>();
  #next = 0;
  #ended = false;

  /** Entries kept, oldest first; `entries[0].seq` may be above 0 once old ones were dropped. */
  get entries(): readonly ConversationEntry[] {
    return this.#entries;
  }

  /** True once nothing more will come (the task is over, or the conversation was read from a file). */
  get ended(): boolean {
    return this.#ended;
  }

  addMessage(message: CliMessage, at: number | null): void {
    const sub = isSubagent(message);
    for (const shown of entriesOf(message)) this.add(shown, at, sub);
  }

  add(shown: Shown, at: number | null, sub = false): void {
    const entry: ConversationEntry = { ...shown, seq: this.#next++, at, ...(sub && { sub }) };
    this.#entries.push(entry);
    if (this.#entries.length > MAX_CONVERSATION_ENTRIES) this.#entries.shift();
    this.#events.emit({ type: "entry", entry });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#events.emit({ type: "end" });
  }

  /** Calls `listener` for every entry added from now on, and at the end; returns the unsubscribe function. */
  on(listener: (event: ConversationEvent) => void): () => void {
    return this.#events.on(listener);
  }

  /** A one-line account of the latest entry, for the table's activity column. */
  latest(): string {
    const last = this.#entries.at(-1);
    if (!last) return "";
    return oneLine(describe(last), 160);
  }
}

function describe(entry: Shown): string {
  switch (entry.kind) {
    case "text":
    case "thinking":
      return entry.text;
    case "tool_call":
      return entry.peer ? `${entry.peer.asks ? "asks" : "tells"} ${entry.peer.name}: ${entry.peer.text}` : `${entry.name} ${entry.input}`;
    case "tool_result":
      return `${entry.isError ? "tool error: " : "tool result: "}${entry.text}`;
    case "hook":
      return `hook ${entry.name}: ${entry.outcome}`;
    case "permission":
      return `waiting for permission to ${entry.ask}`;
    case "permission_settled":
      return "permission answered";
    case "result":
    case "note":
      return entry.text;
  }
}
