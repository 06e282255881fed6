// A workflow script's phases as spans under the run's, and where each agent() call's task span goes: under its phase.
import { type Context, type Span, trace } from "@opentelemetry/api";
import type { WorkflowRunEvent } from "../run/index.ts";
import { clip } from "../util/one-line.ts";
import { CONTENT_MAX } from "./attributes.ts";
import type { Telemetry } from "./sdk.ts";

/** A phase's span, ended when the run ends, at the end of the last call in it. */
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

export class ScriptPhases {
  readonly #telemetry: Telemetry;
  readonly #run: Span;
  readonly #context: Context;
  readonly #phases = new Map<string, PhaseSpan>();
  /** By task name: the call it runs. */
  readonly #calls = new Map<string, CallOf>();

  constructor(telemetry: Telemetry, run: Span, context: Context) {
    this.#telemetry = telemetry;
    this.#run = run;
    this.#context = context;
  }

  /** A script event: phases open their spans, a log is an event of the run's span, a call is remembered for its task's span. */
  apply(event: WorkflowRunEvent): void {
    switch (event.type) {
      case "workflow_phase":
        this.#phase(event.title, event.workflow);
        return;
      case "workflow_log":
        this.#run.addEvent("log", this.#telemetry.settings.content ? { "cadre.log": clip(event.message, CONTENT_MAX) } : {});
        return;
      case "agent_started":
        this.#calls.set(event.name, { ...event.call });
        return;
      case "agent_ended": {
        const phase = event.call.phase === undefined ? undefined : this.#phase(event.call.phase, event.call.workflow);
        if (phase) phase.lastEnd = Math.max(phase.lastEnd ?? 0, Date.now());
        return;
      }
      default:
        return;
    }
  }

  /** Where the task span of `task` goes (its call's phase, else the run), with what it says of its call. */
  placeOf(task: string): { context: Context; attributes: Record<string, string | number> } {
    const call = this.#calls.get(task);
    if (call === undefined) return { context: this.#context, attributes: {} };
    const context = call.phase === undefined ? this.#context : this.#phase(call.phase, call.workflow).context;
    return { context, attributes: callAttributes(call, this.#telemetry.settings.content) };
  }

  /** Ends the phases' spans. */
  end(): void {
    for (const phase of this.#phases.values()) phase.span.end(phase.lastEnd);
  }

  /** A phase's span (a nested workflow's phases are its own), started the first time the phase is named. */
  #phase(title: string, workflow: string | undefined): PhaseSpan {
    const key = `${workflow ?? ""}\u0000${title}`;
    let phase = this.#phases.get(key);
    if (phase === undefined) {
      const attributes = { "cadre.span": "phase", "cadre.phase": title, ...(workflow !== undefined && { "cadre.workflow.nested": workflow }) };
      const span = this.#telemetry.tracer.startSpan(`phase ${title}`, { attributes }, this.#context);
      phase = { span, context: trace.setSpan(this.#context, span), lastEnd: undefined };
      this.#phases.set(key, phase);
    }
    return phase;
  }
}

/** What a task span says of its agent() call; the prompt only with content on. */
function callAttributes(call: CallOf, content: boolean): Record<string, string | number> {
  return {
    "cadre.workflow.label": call.label,
    "cadre.workflow.call_index": call.index,
    ...(call.phase !== undefined && { "cadre.phase": call.phase }),
    ...(call.workflow !== undefined && { "cadre.workflow.nested": call.workflow }),
    ...(content && { "cadre.prompt": clip(call.prompt, CONTENT_MAX) }),
  };
}
