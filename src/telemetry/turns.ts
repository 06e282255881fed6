/**
 * A task's spans as the events fold them, and its worker's messages folded into turn
 * (`chat <model>`) and tool (`execute_tool <tool>`) spans: a turn is one model response,
 * by its message id; a tool call ends with its result.
 */
import { type Attributes, type Context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { addUsage, emptyUsage, type TaskInfo } from "../orchestrator/index.ts";
import type { CliMessage } from "../protocol/index.ts";
import { clip } from "../util/one-line.ts";
import {
  ANTHROPIC,
  CONTENT_MAX,
  GEN_AI_OPERATION,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_ID,
  GEN_AI_SYSTEM,
  GEN_AI_TOOL_ARGUMENTS,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_RESULT,
  usageAttributes,
} from "./attributes.ts";
import type { BackgroundSpans } from "./background.ts";

export interface Tool {
  span: Span;
  context: Context;
  name: string;
  /** For ask_peer: whom it asks (matched with the peer's turn; not exported unless content is on). */
  peer: string | undefined;
}

export interface TaskSpans {
  info: TaskInfo;
  own: Span | undefined;
  /** Where its attempts (and, without detail, nothing) go. */
  context: Context;
  queue: Span | undefined;
  attempt: { span: Span; context: Context } | undefined;
  turn: { span: Span; context: Context; id: string } | undefined;
  tools: Map<string, Tool>;
  permissions: Map<string, Span>;
  model: string | undefined;
  /** Its background tasks' spans, while they run (background.ts). */
  background: BackgroundSpans;
}

export const SPAWN = /(^|__)spawn_(worker|session)$/;
export const ASK_PEER = /(^|__)ask_peer$/;

/** Ends a task's open turn and the tool calls of it still running. */
export function endTurn(task: TaskSpans): void {
  for (const tool of task.tools.values()) tool.span.end();
  task.tools.clear();
  task.turn?.span.end();
  task.turn = undefined;
}

/** One message of a task's worker, folded into its turn and tool spans. */
export function foldMessage(task: TaskSpans, message: CliMessage, { tracer, content }: { tracer: Tracer; content: boolean }): void {
  if (message.type === "system" && message.subtype === "init") {
    task.model = typeof message.model === "string" ? message.model : task.model;
    if (typeof message.session_id === "string") task.attempt?.span.setAttribute("gen_ai.conversation.id", message.session_id);
    return;
  }
  if (message.type === "assistant") {
    const api = message.message;
    const id = typeof api.id === "string" ? api.id : (message.uuid ?? "");
    const model = typeof api.model === "string" ? api.model : task.model;
    if (task.turn?.id !== id) {
      endTurn(task);
      const parent = task.attempt?.context ?? task.context;
      const attributes: Attributes = {
        "cadre.span": "turn",
        "cadre.task": task.info.name,
        [GEN_AI_OPERATION]: "chat",
        [GEN_AI_SYSTEM]: ANTHROPIC,
        [GEN_AI_RESPONSE_ID]: id,
        ...(model !== undefined && { [GEN_AI_REQUEST_MODEL]: model }),
      };
      const span = tracer.startSpan(`chat ${model ?? "claude"}`, { attributes }, parent);
      task.turn = { span, context: trace.setSpan(parent, span), id };
    }
    const turn = task.turn!;
    if (api.usage) {
      const usage = emptyUsage();
      addUsage(usage, api.usage);
      turn.span.setAttributes(usageAttributes(usage));
    }
    for (const block of Array.isArray(api.content) ? api.content : []) {
      if (block.type === "text" && content && typeof block.text === "string")
        turn.span.setAttribute("cadre.content.text", clip(block.text, CONTENT_MAX));
      if (block.type !== "tool_use" || typeof block.id !== "string" || typeof block.name !== "string") continue;
      const input = (block.input ?? {}) as Record<string, unknown>;
      const attributes: Attributes = {
        "cadre.span": "tool",
        [GEN_AI_OPERATION]: "execute_tool",
        [GEN_AI_TOOL_NAME]: block.name,
        [GEN_AI_TOOL_CALL_ID]: block.id,
        ...(content && { [GEN_AI_TOOL_ARGUMENTS]: clip(JSON.stringify(input), CONTENT_MAX) }),
      };
      const span = tracer.startSpan(`execute_tool ${block.name}`, { attributes }, turn.context);
      const peer = ASK_PEER.test(block.name) && typeof input.peer === "string" ? input.peer : undefined;
      task.tools.set(block.id, { span, context: trace.setSpan(turn.context, span), name: block.name, peer });
    }
    return;
  }
  if (message.type === "user" && Array.isArray(message.message.content)) {
    for (const block of message.message.content) {
      if (block.type !== "tool_result" || typeof block.tool_use_id !== "string") continue;
      const tool = task.tools.get(block.tool_use_id);
      if (!tool) continue;
      if (block.is_error === true) tool.span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool reported an error" });
      if (content)
        tool.span.setAttribute(
          GEN_AI_TOOL_RESULT,
          clip(typeof block.content === "string" ? block.content : JSON.stringify(block.content), CONTENT_MAX),
        );
      tool.span.end();
      task.tools.delete(block.tool_use_id);
    }
    return;
  }
  if (message.type === "result") {
    endTurn(task);
    const usage = emptyUsage();
    addUsage(usage, message.usage);
    task.attempt?.span.setAttributes({ ...usageAttributes(usage), "cadre.num_turns": message.num_turns ?? 0 });
    if (message.is_error === true) task.attempt?.span.setStatus({ code: SpanStatusCode.ERROR, message: message.subtype });
  }
}

export function findTool(task: TaskSpans, name: RegExp, peer?: string): Tool | undefined {
  const tools = [...task.tools.values()].reverse();
  return tools.find((tool) => name.test(tool.name) && (peer === undefined || tool.peer === undefined || tool.peer === peer));
}

export function lastTool(task: TaskSpans): Tool | undefined {
  return [...task.tools.values()].at(-1);
}
