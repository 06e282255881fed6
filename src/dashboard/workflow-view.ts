// What the page shows of a workflow script's run beside its rows: its result, error and logs, from the run's read-model or its record.
import { type LenientSummary, type RunModel, WorkflowRecordSchema } from "../run/index.ts";
import { clip } from "../util/one-line.ts";
import type { WorkflowView } from "./feed.ts";

/** The most of a result the page is sent: the record has all of it. */
const RESULT_MAX = 20_000;

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

/** The workflow of a live run as its read-model has it so far, or null for a swarm's run. */
export function liveWorkflowView(model: RunModel): WorkflowView | null {
  const { workflow } = model;
  if (workflow === undefined) return null;
  const { outcome } = workflow;
  return {
    name: workflow.name,
    description: workflow.description,
    result: outcome?.ok ? resultText(outcome.result) : null,
    error: outcome?.error ? errorText(outcome.error) : null,
    logs: [...workflow.logs],
  };
}
