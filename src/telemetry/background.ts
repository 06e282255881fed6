// A task's background work as spans: one per background task under the task's attempt, one per workflow agent under its workflow.
import { type Attributes, type Context, type Span, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import type { BackgroundTask } from "../orchestrator/index.ts";

interface BackgroundSpan {
  span: Span;
  context: Context;
  /** A workflow's agents by index, while they run. */
  agents: Map<number, Span>;
  /** Agents whose span has ended: a later progress message does not start one again. */
  ended: Set<number>;
}

/** The open background spans of one task, by background task id. */
export type BackgroundSpans = Map<string, BackgroundSpan>;

const ENDED_AGENT_STATES = new Set(["done", "error", "failed", "skipped", "cancelled"]);

function taskAttributes(task: BackgroundTask): Attributes {
  return {
    "cadre.background.status": task.status,
    ...(task.usage && {
      "cadre.background.total_tokens": task.usage.totalTokens,
      "cadre.background.tool_uses": task.usage.toolUses,
      "cadre.background.duration_ms": task.usage.durationMs,
    }),
    ...(task.phases && { "cadre.workflow.phases": task.phases }),
    ...(task.agents && { "cadre.workflow.agents": task.agents.length }),
  };
}

/** Folds a background task's latest state into its span (started under `parent` on first sight) and its agents' spans. */
export function foldBackground(spans: BackgroundSpans, task: BackgroundTask, tracer: Tracer, parent: Context): void {
  let open = spans.get(task.id);
  if (!open) {
    if (task.status !== "running") return;
    const span = tracer.startSpan(
      `background ${task.kind} ${task.description}`,
      {
        attributes: {
          "cadre.span": "background_task",
          "cadre.background.id": task.id,
          "cadre.background.kind": task.kind,
          "cadre.background.description": task.description,
          ...(task.workflowName !== undefined && { "cadre.workflow.name": task.workflowName }),
        },
      },
      parent,
    );
    open = { span, context: trace.setSpan(parent, span), agents: new Map(), ended: new Set() };
    spans.set(task.id, open);
  }
  open.span.setAttributes(taskAttributes(task));
  for (const agent of task.agents ?? []) {
    let span = open.agents.get(agent.index);
    if (!span && agent.agentId !== undefined && !open.ended.has(agent.index)) {
      span = tracer.startSpan(
        `workflow agent ${agent.label ?? agent.index}`,
        {
          attributes: {
            "cadre.span": "workflow_agent",
            "cadre.workflow.agent_index": agent.index,
            ...(agent.label !== undefined && { "cadre.workflow.agent_label": agent.label }),
            ...(agent.phase !== undefined && { "cadre.workflow.phase": agent.phase }),
          },
        },
        open.context,
      );
      open.agents.set(agent.index, span);
    }
    if (span && ENDED_AGENT_STATES.has(agent.state)) {
      span.setAttributes({
        "cadre.workflow.agent_state": agent.state,
        ...(agent.tokens !== undefined && { "cadre.background.total_tokens": agent.tokens }),
        ...(agent.toolCalls !== undefined && { "cadre.background.tool_uses": agent.toolCalls }),
      });
      if (agent.state !== "done") span.setStatus({ code: SpanStatusCode.ERROR, message: `the agent ended ${agent.state}` });
      span.end();
      open.agents.delete(agent.index);
      open.ended.add(agent.index);
    }
  }
  if (task.status !== "running") endOne(spans, task.id, task.status === "completed" ? undefined : `the background task ended ${task.status}`);
}

function endOne(spans: BackgroundSpans, id: string, error: string | undefined): void {
  const open = spans.get(id);
  if (!open) return;
  for (const span of open.agents.values()) span.end();
  if (error !== undefined) open.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  open.span.end();
  spans.delete(id);
}

/** Ends what is still open when the task's attempt ends: work its task stopped. */
export function endBackground(spans: BackgroundSpans): void {
  for (const id of [...spans.keys()]) endOne(spans, id, "the task ended first");
}
