/**
 * Spans from cadre's events: the orchestrator's (tasks, attempts, the CLI's
 * messages, hooks, permissions, peer and supervisor turns) fold into task →
 * attempt → turn → tool, with queue waits, hook decisions, permission
 * requests, peer answers and spawned children where they happened. Nothing
 * in the core calls OpenTelemetry: this only listens.
 */
import { type Attributes, type Context, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { OrchestratorEvent, TaskInfo, TaskResult } from "../orchestrator/index.ts";
import { ANTHROPIC, GEN_AI_OPERATION, GEN_AI_SYSTEM, GEN_AI_TOOL_NAME, resultAttributes, usageAttributes } from "./attributes.ts";
import { endBackground, foldBackground } from "./background.ts";
import { ASK_PEER, endTurn, findTool, foldMessage, lastTool, SPAWN, type TaskSpans } from "./turns.ts";

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
        if (this.#source.detail) foldMessage(task, event.message, this.#source);
        return;
      case "task_finished":
        this.#finished(task, event.result);
        return;
      case "background_task":
        if (this.#source.detail) foldBackground(task.background, event.background, this.#source.tracer, task.attempt?.context ?? task.context);
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

  /** Adds to the open span of the run's task `name` what was told of it after the span started (who posted it). */
  annotate(name: string, attributes: Attributes): void {
    for (const task of this.#tasks.values()) if (task.info.parentId === undefined && task.info.name === name) task.own?.setAttributes(attributes);
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
      background: new Map(),
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
    endTurn(task);
    endBackground(task.background);
    for (const span of task.permissions.values()) span.end();
    task.permissions.clear();
    if (!task.attempt) return;
    task.attempt.span.setAttributes(attributes);
    if (status.code !== SpanStatusCode.UNSET) task.attempt.span.setStatus(status);
    task.attempt.span.end();
    task.attempt = undefined;
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
