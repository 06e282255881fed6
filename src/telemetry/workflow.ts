/**
 * The telemetry of one workflow script's run (`cadre run script.js`): a
 * workflow span above a span per phase, and each agent() call's task span
 * (with its attempts, turns and tools, as a swarm task's) under its phase, or
 * under the workflow span when it has none. The CLI feeds it the run's events.
 */
import { type Context, ROOT_CONTEXT, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { OrchestratorEvent, TaskInfo } from "../orchestrator/index.ts";
import type { WorkflowRunEvent, WorkflowSummary } from "../run/index.ts";
import { clip } from "../util/one-line.ts";
import { CONTENT_MAX, GEN_AI_SYSTEM, recordAttributes } from "./attributes.ts";
import { EventMetrics } from "./metrics.ts";
import type { Telemetry } from "./sdk.ts";
import { EventSpans } from "./spans.ts";

export interface WorkflowDescription {
  /** meta.name. */
  name: string;
  description: string;
  /** A run on Redis hosts: the hosts trace the inside of each agent's task. */
  distributed: boolean;
  concurrency: number | undefined;
}

/** A phase's span, ended once the run ends at the end of the last agent in it. */
interface PhaseSpan {
  span: Span;
  context: Context;
  lastEnd: number | undefined;
}

/** What an agent() call's task span says of the call. */
interface CallOf {
  label: string;
  phase: string | undefined;
  workflow: string | undefined;
  index: number;
  prompt: string;
}

const propagator = new W3CTraceContextPropagator();

export class WorkflowTelemetry {
  readonly #telemetry: Telemetry;
  readonly #root: Span;
  readonly #context: Context;
  readonly #spans: EventSpans;
  readonly #metrics: EventMetrics;
  readonly #phases = new Map<string, PhaseSpan>();
  /** By row name (the task's name): the call it runs. */
  readonly #calls = new Map<string, CallOf>();
  #finished = false;

  constructor(telemetry: Telemetry, workflow: WorkflowDescription) {
    this.#telemetry = telemetry;
    const { content } = telemetry.settings;
    this.#root = telemetry.tracer.startSpan(`workflow ${workflow.name}`, {
      attributes: {
        "cadre.span": "workflow",
        "cadre.workflow": workflow.name,
        "cadre.workflow.description": workflow.description,
        [GEN_AI_SYSTEM]: "anthropic",
      },
    });
    this.#context = trace.setSpan(ROOT_CONTEXT, this.#root);
    this.#spans = new EventSpans({
      tracer: telemetry.tracer,
      content,
      detail: !workflow.distributed,
      root: (task) => {
        const call = this.#calls.get(task.name);
        return {
          context: call?.phase === undefined ? this.#context : this.#phase(call.phase, call.workflow).context,
          ownSpan: true,
          ...(call && { attributes: callAttributes(call, content) }),
        };
      },
      fallback: () => this.#context,
    });
    this.#metrics = new EventMetrics(telemetry.meter);
    this.#metrics.limit = workflow.concurrency;
  }

  /** The W3C `traceparent` of an agent's task span, for its job to carry to the host that runs it (a --redis run). */
  traceContext(task: TaskInfo): string | undefined {
    const carrier: Record<string, string> = {};
    propagator.inject(this.#spans.open(task), carrier, { set: (target, key, value) => (target[key] = value) });
    return carrier.traceparent;
  }

  /** A workflow event: phases open their spans, a call is remembered for its task's span, a replayed call gets a span of its own. */
  applyWorkflow(event: WorkflowRunEvent): void {
    switch (event.type) {
      case "workflow_phase":
        this.#phase(event.title, event.workflow);
        return;
      case "workflow_log":
        this.#root.addEvent("log", this.#telemetry.settings.content ? { "cadre.log": clip(event.message, CONTENT_MAX) } : {});
        return;
      case "agent_started":
        this.#calls.set(event.name, { ...event.call });
        return;
      case "agent_ended": {
        const phase = event.call.phase === undefined ? undefined : this.#phase(event.call.phase, event.call.workflow);
        if (phase) phase.lastEnd = Math.max(phase.lastEnd ?? 0, Date.now());
        if (event.replayed) this.#replayed(event.name, event.call, phase?.context ?? this.#context);
        return;
      }
      default:
        return;
    }
  }

  /** An event of the engine's tasks: the agents' spans and the run's metrics. */
  applyEngine(event: OrchestratorEvent): void {
    if (event.type === "rate_limit" && event.state.backoffUntil !== null)
      this.#root.addEvent("rate_limit", { "cadre.effective_limit": event.state.effectiveLimit });
    this.#spans.apply(event);
    this.#metrics.apply(event);
  }

  /** Ends the phase spans and the workflow span with the record's figures, and sends everything; once counts. */
  async finish(summary: WorkflowSummary | undefined): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#spans.endAll();
    for (const phase of this.#phases.values()) phase.span.end(phase.lastEnd);
    if (summary) {
      this.#root.setAttributes({
        ...recordAttributes(summary),
        "cadre.run_id": summary.run_id,
        "cadre.attempt": summary.attempt ?? 1,
        "cadre.rehearsal": summary.rehearsal === true,
        "cadre.workflow.agents": summary.agent_count,
        ...(summary.error && { "error.type": summary.error.code }),
      });
      if (summary.error) this.#root.setStatus({ code: SpanStatusCode.ERROR, message: summary.error.message });
      else if (summary.exit_code !== 0) this.#root.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${summary.exit_code}` });
    }
    this.#root.end();
    await this.#telemetry.shutdown();
  }

  /** A phase's span (a nested workflow's phases are its own), started the first time the phase is named. */
  #phase(title: string, workflow: string | undefined): PhaseSpan {
    const key = `${workflow ?? ""}\u0000${title}`;
    let phase = this.#phases.get(key);
    if (phase === undefined) {
      const span = this.#telemetry.tracer.startSpan(
        `phase ${title}`,
        { attributes: { "cadre.span": "phase", "cadre.phase": title, ...(workflow !== undefined && { "cadre.workflow.nested": workflow }) } },
        this.#context,
      );
      phase = { span, context: trace.setSpan(this.#context, span), lastEnd: undefined };
      this.#phases.set(key, phase);
    }
    return phase;
  }

  /** A call a resumed run replayed from its record: no task ran, so its span says only that. */
  #replayed(name: string, call: CallOf, context: Context): void {
    const span = this.#telemetry.tracer.startSpan(
      `task ${name}`,
      {
        attributes: {
          "cadre.span": "task",
          "cadre.task": name,
          "cadre.status": "succeeded",
          "cadre.carried_over": true,
          ...callAttributes(call, this.#telemetry.settings.content),
        },
      },
      context,
    );
    span.end();
  }
}

/** What a task span says of its agent() call; the prompt only with content on. */
function callAttributes(call: CallOf, content: boolean) {
  return {
    "cadre.workflow.label": call.label,
    "cadre.workflow.call_index": call.index,
    ...(call.phase !== undefined && { "cadre.phase": call.phase }),
    ...(call.workflow !== undefined && { "cadre.workflow.nested": call.workflow }),
    ...(content && { "cadre.prompt": clip(call.prompt, CONTENT_MAX) }),
  };
}
