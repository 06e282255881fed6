/**
 * The telemetry of one `cadre run`: a span for the run, the spans and metrics
 * of its events, and the trace context each job of a distributed run carries
 * to its host. The CLI feeds it the run's events as it renders them.
 */
import { type Attributes, type Context, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { budgetLabel, type TaskInfo } from "../orchestrator/index.ts";
import type { RunEvent, Summary, WorkflowRunEvent } from "../run/index.ts";
import { clip } from "../util/one-line.ts";
import { CONTENT_MAX, GEN_AI_SYSTEM, postedAttributes, recordAttributes, resultAttributes } from "./attributes.ts";
import { EventMetrics } from "./metrics.ts";
import { ScriptPhases } from "./phases.ts";
import type { Telemetry } from "./sdk.ts";
import { EventSpans } from "./spans.ts";

export interface RunDescription {
  swarm: string;
  /** A workflow script's run: its span is the workflow's, its calls' task spans go under their phases. */
  workflow?: { description: string };
  /** The config's tasks: their prompts go into spans only with content on. */
  tasks: readonly { name: string; prompt: string }[];
  /** A run on Redis hosts: the hosts trace the inside of each task. */
  distributed: boolean;
  concurrency: number | undefined;
  /** The traceparents of the run spans of earlier attempts (a resumed run): this run's span links to them. */
  earlier?: readonly string[];
}

const propagator = new W3CTraceContextPropagator();

export class RunTelemetry {
  readonly #telemetry: Telemetry;
  readonly #run: Span;
  readonly #context: Context;
  readonly #spans: EventSpans;
  readonly #metrics: EventMetrics;
  /** Tasks of the run that were queued here: the others settle without running (carried over, skipped). */
  readonly #queued = new Set<string>();
  /** A workflow script's phases, for a script's run. */
  readonly #phases: ScriptPhases | undefined;
  /** What the spans of the tasks agents posted say of their poster, by task name. */
  readonly #posted = new Map<string, Attributes>();
  #finished = false;

  constructor(telemetry: Telemetry, run: RunDescription) {
    this.#telemetry = telemetry;
    const { content } = telemetry.settings;
    this.#run = telemetry.tracer.startSpan(run.workflow ? `workflow ${run.swarm}` : `run ${run.swarm}`, {
      links: (run.earlier ?? []).flatMap((traceparent) => {
        const context = trace.getSpanContext(
          propagator.extract(ROOT_CONTEXT, { traceparent }, { get: (carrier, key) => carrier[key as "traceparent"], keys: () => ["traceparent"] }),
        );
        return context ? [{ context, attributes: { "cadre.link": "earlier attempt" } }] : [];
      }),
      attributes: runAttributes(run),
    });
    this.#context = trace.setSpan(ROOT_CONTEXT, this.#run);
    const phases = run.workflow ? new ScriptPhases(telemetry, this.#run, this.#context) : undefined;
    this.#phases = phases;
    const prompts = new Map(run.tasks.map((task) => [task.name, task.prompt]));
    this.#spans = new EventSpans({
      tracer: telemetry.tracer,
      content,
      detail: !run.distributed,
      root: (task) => {
        const place = phases?.placeOf(task.name);
        const prompt = content && prompts.has(task.name) ? { "cadre.prompt": clip(prompts.get(task.name)!, CONTENT_MAX) } : {};
        const attributes = { ...prompt, ...place?.attributes, ...this.#posted.get(task.name) };
        return { context: place?.context ?? this.#context, ownSpan: true, attributes };
      },
      fallback: () => this.#context,
    });
    this.#metrics = new EventMetrics(telemetry.meter);
    this.#metrics.limit = run.concurrency;
  }

  /** The run span's W3C traceparent, for the record: a resumed run links to it. */
  get traceparent(): string | undefined {
    const carrier: Record<string, string> = {};
    propagator.inject(this.#context, carrier, { set: (target, key, value) => (target[key] = value) });
    return carrier.traceparent;
  }

  /** What is known once the run has started: its id (and so every point's), its attempt. */
  begin(run: { runId: string; attempt: number; rehearsal: boolean; description: string }): void {
    this.#run.setAttributes({
      "cadre.run_id": run.runId,
      "cadre.attempt": run.attempt,
      "cadre.rehearsal": run.rehearsal,
      "cadre.engine": run.description,
    });
    Object.assign(this.#metrics.base, { "cadre.run_id": run.runId });
  }

  /**
   * The W3C `traceparent` of a task's span, for its job to carry to the host that runs it.
   * Asked as the job is made, before the task's events reach here: the span starts now.
   */
  traceContext(task: TaskInfo): string | undefined {
    const context = this.#spans.open(task);
    const carrier: Record<string, string> = {};
    propagator.inject(context, carrier, { set: (target, key, value) => (target[key] = value) });
    return carrier.traceparent;
  }

  apply(event: RunEvent): void {
    if (isScriptEvent(event)) {
      this.#phases?.apply(event);
      return;
    }
    if (event.type === "tasks_added") {
      this.#added(event.tasks);
      return;
    }
    // What the run adds beside the orchestrator's events: a made task gets its span when it is queued, like any.
    if (
      event.type === "task_ready" ||
      event.type === "task_rerun" ||
      event.type === "loop_ended" ||
      event.type === "record_unwritten" ||
      event.type === "record_written_again"
    )
      return;
    if (event.type === "task_settled") {
      if (!this.#queued.has(event.result.id)) this.#unrun(event.task, event.result, event.carriedOver === true);
      return;
    }
    if (event.type === "task_queued" && event.task.parentId === undefined) this.#queued.add(event.task.id);
    if (event.type === "rate_limit" && event.state.backoffUntil !== null)
      this.#run.addEvent("rate_limit", { "cadre.effective_limit": event.state.effectiveLimit });
    if (event.type === "budget_exceeded")
      this.#run.addEvent("budget_exceeded", {
        "cadre.cost_usd": event.spentUsd,
        "cadre.budget_usd": event.budgetUsd,
        "cadre.budget": budgetLabel(event.scope ?? { kind: "run" }),
      });
    if (event.type === "plan_window")
      this.#run.addEvent(`plan_window_${event.state}`, { "cadre.plan_window": event.window, "cadre.resets_at": event.resetsAt });
    this.#spans.apply(event);
    this.#metrics.apply(event);
  }

  /** Ends the run's span with the record's totals and sends everything; safe to call on every way out, once counts. */
  async finish(summary: Summary | undefined): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#spans.endAll();
    this.#phases?.end();
    if (summary) {
      this.#run.setAttributes(recordAttributes(summary));
      const { agent_count: agents, error } = summary as { agent_count?: number; error?: { code: string; message: string } | null };
      if (agents !== undefined) this.#run.setAttribute("cadre.workflow.agents", agents);
      if (error) {
        this.#run.setAttribute("error.type", error.code);
        this.#run.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      } else if (summary.exit_code !== 0) this.#run.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${summary.exit_code}` });
    }
    this.#run.end();
    await this.#telemetry.shutdown();
  }

  /**
   * Tasks made as the run goes: a posted one's span names its poster. Its span may have started already
   * (the engine's events and the plan's are not ordered between them): it is told then.
   */
  #added(tasks: Extract<RunEvent, { type: "tasks_added" }>["tasks"]): void {
    for (const { name, posted } of tasks) {
      if (posted === undefined) continue;
      const attributes = postedAttributes(posted);
      this.#posted.set(name, attributes);
      this.#spans.annotate(name, attributes);
    }
  }

  /** A task that settled without running here: carried over from the resumed run, or skipped. */
  #unrun(task: { name: string; agent: string | undefined }, result: Parameters<typeof resultAttributes>[0], carriedOver: boolean): void {
    const info: TaskInfo = { id: result.id, name: task.name, agent: task.agent, parentId: undefined };
    const place = this.#phases?.placeOf(task.name);
    const span = this.#telemetry.tracer.startSpan(
      `task ${info.name}`,
      {
        attributes: {
          "cadre.span": "task",
          "cadre.task": info.name,
          "cadre.task_id": info.id,
          "cadre.carried_over": carriedOver,
          ...(info.agent !== undefined && { "cadre.agent": info.agent }),
          ...resultAttributes(result),
          ...place?.attributes,
          ...this.#posted.get(task.name),
        },
      },
      place?.context ?? this.#context,
    );
    if (result.status === "failed") span.setStatus({ code: SpanStatusCode.ERROR, message: result.error?.message ?? "failed" });
    span.end();
  }
}

/** The run span's attributes: a swarm's run, or a workflow script's. */
function runAttributes(run: RunDescription): Record<string, string | number> {
  const common = { "cadre.swarm": run.swarm, "cadre.tasks": run.tasks.length, [GEN_AI_SYSTEM]: "anthropic" };
  if (run.workflow === undefined) return { "cadre.span": "run", ...common };
  return { "cadre.span": "workflow", ...common, "cadre.workflow": run.swarm, "cadre.workflow.description": run.workflow.description };
}

const SCRIPT_EVENTS = new Set(["workflow_started", "workflow_phase", "workflow_log", "agent_started", "agent_ended", "workflow_ended"]);

/** A workflow script's own event, beside the task events of its calls. */
function isScriptEvent(event: RunEvent): event is WorkflowRunEvent {
  return SCRIPT_EVENTS.has(event.type);
}
