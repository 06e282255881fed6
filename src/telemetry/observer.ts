/**
 * The telemetry of a long-running process: a `cadre worker` host (its runs'
 * jobs join the traces their coordinators started) or `cadre mcp` (each
 * task or session a trace of its own). Spans and metrics come from the
 * orchestrator's events, as for a run.
 */
import { type Context, ROOT_CONTEXT } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { HostObserver } from "../distributed/index.ts";
import type { OrchestratorEvent } from "../orchestrator/index.ts";
import { EventMetrics } from "./metrics.ts";
import type { Telemetry } from "./sdk.ts";
import { EventSpans } from "./spans.ts";

const propagator = new W3CTraceContextPropagator();

/** The context a W3C traceparent names, or undefined for none or one that does not parse. */
function remoteContext(traceparent: string | undefined): Context | undefined {
  if (traceparent === undefined) return undefined;
  const context = propagator.extract(ROOT_CONTEXT, { traceparent }, { get: (carrier, key) => carrier[key], keys: (carrier) => Object.keys(carrier) });
  return context === ROOT_CONTEXT ? undefined : context;
}

/** What a host's runs and an MCP server's orchestrator have in common: events in, spans and metrics out. */
export class OrchestratorTelemetry implements HostObserver {
  readonly #telemetry: Telemetry;
  readonly #metrics: EventMetrics;
  /** Per run (one run, "", for `cadre mcp`): its spans, and the trace context each job brought. */
  readonly #runs = new Map<string, { spans: EventSpans; parents: Map<string, Context> }>();

  constructor(telemetry: Telemetry, attributes: Record<string, string>, concurrency: number | undefined) {
    this.#telemetry = telemetry;
    this.#metrics = new EventMetrics(telemetry.meter, attributes);
    this.#metrics.limit = concurrency;
  }

  /** A job of a run starts here: its spans go under the coordinator's span of the task, when it sent one. */
  job(runId: string, taskId: string, traceContext: string | undefined): void {
    const context = remoteContext(traceContext);
    if (context) this.#run(runId).parents.set(taskId, context);
  }

  event(runId: string, event: OrchestratorEvent): void {
    this.#run(runId).spans.apply(event);
    this.#metrics.apply(event);
    // A host lives for days: each finished job's spans leave now rather than in the next batch.
    if (event.type === "task_finished" && event.task.parentId === undefined) {
      this.#run(runId).parents.delete(event.task.id);
      void this.#telemetry.flush();
    }
  }

  /** For `cadre mcp`: its one orchestrator's events. */
  readonly apply = (event: OrchestratorEvent): void => this.event("", event);

  async close(): Promise<void> {
    for (const { spans } of this.#runs.values()) spans.endAll();
    await this.#telemetry.shutdown();
  }

  #run(runId: string): { spans: EventSpans; parents: Map<string, Context> } {
    let run = this.#runs.get(runId);
    if (run) return run;
    const parents = new Map<string, Context>();
    const attributes = runId === "" ? {} : { "cadre.run_id": runId };
    const spans = new EventSpans({
      tracer: this.#telemetry.tracer,
      content: this.#telemetry.settings.content,
      detail: true,
      root: (task) => {
        const remote = parents.get(task.id);
        // The coordinator's task span is this job's; without one, the task is a trace of its own.
        return remote ? { context: remote, ownSpan: false } : { context: ROOT_CONTEXT, ownSpan: true, attributes };
      },
      fallback: () => ROOT_CONTEXT,
    });
    run = { spans, parents };
    this.#runs.set(runId, run);
    return run;
  }
}
