/**
 * Spans from cadre's events: the orchestrator's (tasks, attempts, the CLI's
 * messages, hooks, permissions, peer and supervisor turns) fold into task →
 * attempt → turn → tool, with queue waits, hook decisions, permission
 * requests, peer answers and spawned children where they happened. Nothing
 * in the core calls OpenTelemetry: this only listens.
 */
import { type Attributes, type Context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { addUsage, emptyUsage, type OrchestratorEvent, type TaskInfo, type TaskResult } from "../orchestrator/index.ts";
import type { CliMessage } from "../protocol/index.ts";
import {
  ANTHROPIC,
  clip,
  GEN_AI_OPERATION,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_ID,
  GEN_AI_SYSTEM,
  GEN_AI_TOOL_ARGUMENTS,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_RESULT,
  resultAttributes,
  usageAttributes,
} from "./attributes.ts";

export interface SpanSource {
  tracer: Tracer;
  /** Prompts, tool inputs and answers go into spans only when true. */
  content: boolean;
  /** Attempts, turns, tools, hooks and permissions: false for a distributed run's coordinator, whose hosts make them. */
  detail: boolean;
  /**
   * Where a task without a parent task goes: under `context`, in a span of its
   * own (a run's task), or straight under it when `ownSpan` is false (a host's
   * side of a job, whose task span is the coordinator's).
   */
  root(task: TaskInfo): { context: Context; ownSpan: boolean; attributes?: Attributes };
  /** Where a peer's or supervisor's turn goes when no task asked. */
  fallback(): Context;
}

interface Tool {
  span: Span;
  context: Context;
  name: string;
  /** For ask_peer: whom it asks (matched with the peer's turn; not exported unless content is on). */
  peer: string | undefined;
}

interface TaskSpans {
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
}

const SPAWN = /(^|__)spawn_(worker|session)$/;
const ASK_PEER = /(^|__)ask_peer$/;

export class EventSpans {
  readonly #source: SpanSource;
  readonly #tasks = new Map<string, TaskSpans>();

  constructor(source: SpanSource) {
    this.#source = source;
  }

  /** The context of a task's own span (or its root), started now if its task_queued has not come yet: for a job to carry to its host. */
  open(info: TaskInfo): Context {
    if (!this.#tasks.has(info.id)) this.#queued(info);
    return this.#tasks.get(info.id)!.context;
  }

  apply(event: OrchestratorEvent): void {
    // Without detail (a coordinator), the hosts trace children and peers: their events reach here only relayed.
    if (event.type === "task_queued" && !this.#tasks.has(event.task.id) && (this.#source.detail || event.task.parentId === undefined))
      this.#queued(event.task);
    else if (event.type === "agent_turn" && this.#source.detail) this.#agentTurn(event);
    // A long-lived session (cadre mcp) is never queued: its span starts with it.
    else if (event.type === "session_status" && event.status !== "closed" && !this.#tasks.has(event.task.id)) this.#queued(event.task, false);
    if (!("task" in event)) return;
    const task = this.#tasks.get(event.task.id);
    if (!task) return;
    switch (event.type) {
      case "task_started":
        task.queue?.end();
        task.queue = undefined;
        if (this.#source.detail) this.#startAttempt(task, event.attempt, { "cadre.worker_origin": event.worker });
        return;
      case "task_retry":
        this.#endAttempt(task, { code: SpanStatusCode.ERROR, message: event.error.message }, { "error.type": event.error.code });
        return;
      case "task_message":
        if (this.#source.detail) this.#message(task, event.message);
        return;
      case "task_finished":
        this.#finished(task, event.result);
        return;
      case "permission_request":
        if (!this.#source.detail) return;
        task.permissions.set(
          event.requestId,
          this.#source.tracer.startSpan(
            `permission ${event.request.toolName}`,
            { attributes: { "cadre.span": "permission", [GEN_AI_TOOL_NAME]: event.request.toolName } },
            this.#toolContext(task, event.request.toolUseId, event.request.toolName),
          ),
        );
        return;
      case "permission_settled":
        task.permissions.get(event.requestId)?.end();
        task.permissions.delete(event.requestId);
        return;
      case "hook_decided": {
        if (!this.#source.detail) return;
        const attributes: Attributes = {
          "cadre.span": "hook",
          "cadre.hook.event": event.event,
          "cadre.hook.action": event.action,
          "cadre.hook.decision": event.decision,
          ...(event.toolName !== undefined && { [GEN_AI_TOOL_NAME]: event.toolName }),
        };
        const span = this.#source.tracer.startSpan(
          `hook ${event.event}`,
          { attributes, startTime: event.startedAt },
          this.#toolContext(task, undefined, event.toolName),
        );
        span.end(event.finishedAt);
        return;
      }
      case "session_status":
        if (event.status === "closed" || event.status === "failed") {
          this.#close(
            task,
            event.status === "failed" ? { code: SpanStatusCode.ERROR, message: "the session failed" } : { code: SpanStatusCode.UNSET, message: "" },
          );
          this.#tasks.delete(task.info.id);
        }
        return;
      case "hook_failed":
        (task.turn?.span ?? task.attempt?.span ?? task.own)?.addEvent("hook_failed", {
          "cadre.hook.event": event.event,
          "error.type": event.error.code,
        });
        return;
      default:
        return;
    }
  }

  /** Ends every span still open (a run killed, a process leaving): they show as unfinished work. */
  endAll(): void {
    for (const task of this.#tasks.values()) this.#close(task, { code: SpanStatusCode.ERROR, message: "the run ended before the task" });
    this.#tasks.clear();
  }

  #queued(info: TaskInfo, waits = true): void {
    const { tracer } = this.#source;
    const parent = info.parentId === undefined ? undefined : this.#tasks.get(info.parentId);
    const root = parent ? undefined : this.#source.root(info);
    // A child goes under the tool call that spawned it; a task of the run under the run.
    const context = parent ? (findTool(parent, SPAWN)?.context ?? parent.attempt?.context ?? parent.context) : root!.context;
    const attributes: Attributes = {
      "cadre.span": "task",
      "cadre.task": info.name,
      "cadre.task_id": info.id,
      [GEN_AI_SYSTEM]: ANTHROPIC,
      ...(info.agent !== undefined && { "cadre.agent": info.agent }),
      ...(parent && { "cadre.parent_task": parent.info.name }),
      ...root?.attributes,
    };
    const own = root?.ownSpan === false ? undefined : tracer.startSpan(`task ${info.name}`, { attributes }, context);
    const inner = own ? trace.setSpan(context, own) : context;
    const queue = own && waits ? tracer.startSpan("queue", { attributes: { "cadre.span": "queue", "cadre.task": info.name } }, inner) : undefined;
    this.#tasks.set(info.id, {
      info,
      own,
      context: inner,
      queue,
      attempt: undefined,
      turn: undefined,
      tools: new Map(),
      permissions: new Map(),
      model: undefined,
    });
  }

  #startAttempt(task: TaskSpans, attempt: number, attributes: Attributes): void {
    this.#endAttempt(task, { code: SpanStatusCode.UNSET });
    const span = this.#source.tracer.startSpan(
      `attempt ${attempt}`,
      { attributes: { "cadre.span": "attempt", "cadre.task": task.info.name, "cadre.attempt": attempt, ...attributes } },
      task.context,
    );
    task.attempt = { span, context: trace.setSpan(task.context, span) };
  }

  #endAttempt(task: TaskSpans, status: { code: SpanStatusCode; message?: string }, attributes: Attributes = {}): void {
    this.#endTurn(task);
    for (const span of task.permissions.values()) span.end();
    task.permissions.clear();
    if (!task.attempt) return;
    task.attempt.span.setAttributes(attributes);
    if (status.code !== SpanStatusCode.UNSET) task.attempt.span.setStatus(status);
    task.attempt.span.end();
    task.attempt = undefined;
  }

  #endTurn(task: TaskSpans): void {
    for (const tool of task.tools.values()) tool.span.end();
    task.tools.clear();
    task.turn?.span.end();
    task.turn = undefined;
  }

  #message(task: TaskSpans, message: CliMessage): void {
    const { tracer, content } = this.#source;
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
        this.#endTurn(task);
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
        if (block.type === "text" && content && typeof block.text === "string") turn.span.setAttribute("cadre.content.text", clip(block.text));
        if (block.type !== "tool_use" || typeof block.id !== "string" || typeof block.name !== "string") continue;
        const input = (block.input ?? {}) as Record<string, unknown>;
        const attributes: Attributes = {
          "cadre.span": "tool",
          [GEN_AI_OPERATION]: "execute_tool",
          [GEN_AI_TOOL_NAME]: block.name,
          [GEN_AI_TOOL_CALL_ID]: block.id,
          ...(content && { [GEN_AI_TOOL_ARGUMENTS]: clip(JSON.stringify(input)) }),
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
          tool.span.setAttribute(GEN_AI_TOOL_RESULT, clip(typeof block.content === "string" ? block.content : JSON.stringify(block.content)));
        tool.span.end();
        task.tools.delete(block.tool_use_id);
      }
      return;
    }
    if (message.type === "result") {
      this.#endTurn(task);
      const usage = emptyUsage();
      addUsage(usage, message.usage);
      task.attempt?.span.setAttributes({ ...usageAttributes(usage), "cadre.num_turns": message.num_turns ?? 0 });
      if (message.is_error === true) task.attempt?.span.setStatus({ code: SpanStatusCode.ERROR, message: message.subtype });
    }
  }

  #finished(task: TaskSpans, result: TaskResult): void {
    const failed = result.status === "failed";
    const status = failed
      ? { code: SpanStatusCode.ERROR, message: result.error?.message ?? "failed" }
      : result.status === "succeeded"
        ? { code: SpanStatusCode.OK }
        : { code: SpanStatusCode.UNSET };
    this.#endAttempt(task, status.code === SpanStatusCode.ERROR ? status : { code: SpanStatusCode.UNSET }, {
      ...(result.error && { "error.type": result.error.code }),
    });
    task.queue?.end();
    if (task.own) {
      task.own.setAttributes(resultAttributes(result));
      if (status.code !== SpanStatusCode.UNSET) task.own.setStatus(status);
      task.own.end(result.finishedAt);
    }
    this.#tasks.delete(task.info.id);
  }

  #close(task: TaskSpans, status: { code: SpanStatusCode; message: string }): void {
    this.#endAttempt(task, status);
    task.queue?.end();
    if (status.code !== SpanStatusCode.UNSET) task.own?.setStatus(status);
    task.own?.end();
  }

  /** A peer's or supervisor's answer: under the asking task's ask_peer call (or its turn), as a span of the answering session's turn. */
  #agentTurn(event: Extract<OrchestratorEvent, { type: "agent_turn" }>): void {
    const asker = event.asker === undefined ? undefined : [...this.#tasks.values()].find((t) => t.info.name === event.asker);
    const tool = asker && (event.kind === "peer" ? findTool(asker, ASK_PEER, event.agent) : lastTool(asker));
    const parent = tool?.context ?? asker?.turn?.context ?? asker?.attempt?.context ?? asker?.context ?? this.#source.fallback();
    const { turn } = event;
    const attributes: Attributes = {
      "cadre.span": event.kind === "peer" ? "peer_turn" : "supervisor_turn",
      "cadre.agent": event.agent,
      [GEN_AI_OPERATION]: "chat",
      [GEN_AI_SYSTEM]: ANTHROPIC,
      "gen_ai.conversation.id": turn.sessionId,
      "cadre.cost_usd": turn.costUsd,
      "cadre.num_turns": turn.numTurns,
      ...usageAttributes(turn.usage),
      ...(event.asker !== undefined && { "cadre.asker": event.asker }),
    };
    // The asking call and the answering turn are also linked, for a viewer that follows links rather than parents.
    const links = tool ? [{ context: tool.span.spanContext() }] : [];
    const span = this.#source.tracer.startSpan(`${event.kind} ${event.agent}`, { attributes, startTime: event.startedAt, links }, parent);
    if (turn.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: "the answering turn ended in error" });
    span.end(turn.finishedAt);
  }

  /** Where something about a tool call goes: that call's span when it is open, else the turn's. */
  #toolContext(task: TaskSpans, toolUseId: string | undefined, toolName: string | undefined): Context {
    const byId = toolUseId === undefined ? undefined : task.tools.get(toolUseId);
    const byName = byId ?? [...task.tools.values()].reverse().find((tool) => tool.name === toolName);
    return byName?.context ?? task.turn?.context ?? task.attempt?.context ?? task.context;
  }
}

function findTool(task: TaskSpans, name: RegExp, peer?: string): Tool | undefined {
  const tools = [...task.tools.values()].reverse();
  return tools.find((tool) => name.test(tool.name) && (peer === undefined || tool.peer === undefined || tool.peer === peer));
}

function lastTool(task: TaskSpans): Tool | undefined {
  return [...task.tools.values()].at(-1);
}
