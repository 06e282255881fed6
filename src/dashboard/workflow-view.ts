// What the page shows of a workflow script's run beside its rows: each call's phase and the script's result, live or from its record.
import { z } from "zod";
import type { LenientSummary, WorkflowRunEvent } from "../run/index.ts";
import { clip } from "../util/one-line.ts";
import type { WorkflowView } from "./feed.ts";

/** The most of a result the page is sent: the record has all of it. */
const RESULT_MAX = 20_000;

/** The fields a workflow run's summary.json adds to a swarm run's (run/workflow-run.ts), read leniently. */
const WorkflowRecordSchema = z.looseObject({
  workflow: z.looseObject({ name: z.string(), description: z.string().optional() }),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable().optional(),
  logs: z.array(z.string()).optional(),
});

function resultText(result: unknown): string {
  return clip(JSON.stringify(result ?? null, null, 2), RESULT_MAX);
}

function errorText(error: { code: string; message: string }): string {
  return `${error.code}: ${error.message}`;
}

/** The workflow a record is of, or null for a swarm's record. */
export function recordWorkflowView(record: LenientSummary): WorkflowView | null {
  const parsed = WorkflowRecordSchema.safeParse(record);
  if (!parsed.success) return null;
  const { workflow, result, error, logs } = parsed.data;
  const complete = (record as { complete?: boolean }).complete !== false;
  return {
    name: workflow.name,
    description: workflow.description ?? "",
    result: complete && !error ? resultText(result) : null,
    error: error ? errorText(error) : null,
    logs: logs ?? [],
  };
}

/** A workflow run as it goes, folded from its events: the phase of each call's row, its logs, and at the end its result. */
export class LiveWorkflow {
  readonly #view: WorkflowView;
  readonly #phases = new Map<string, string>();

  constructor(meta: { name: string; description: string }) {
    this.#view = { name: meta.name, description: meta.description, result: null, error: null, logs: [] };
  }

  apply(event: WorkflowRunEvent): void {
    if (event.type === "agent_started" && event.call.phase !== undefined) this.#phases.set(event.name, event.call.phase);
    else if (event.type === "workflow_log") this.#view.logs.push(event.message);
    else if (event.type === "workflow_ended") {
      const { outcome } = event;
      this.#view.result = outcome.ok ? resultText(outcome.result) : null;
      this.#view.error = outcome.error ? errorText(outcome.error) : null;
    }
  }

  /** The phase of the call whose row is `name`. */
  phaseOf(name: string): string | null {
    return this.#phases.get(name) ?? null;
  }

  get view(): WorkflowView {
    return { ...this.#view, logs: [...this.#view.logs] };
  }
}
