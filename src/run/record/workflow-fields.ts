// The fields a workflow script's run adds to its record: the script and what it ran with, its result, error and logs.
import { z } from "zod";
import type { WorkflowMeta, WorkflowOutcome } from "../../workflow/index.ts";

/** What a script was run with: a replay and a resume run it again with these unless told otherwise. */
export const RecordedWorkflowSchema = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  args: z.unknown().optional(),
  /** Where its agents worked. */
  cwd: z.string().optional(),
  budget_tokens: z.number().nullable().optional(),
  max_agents: z.number().nullable().optional(),
});

/** A workflow run's own fields of summary.json, read back leniently (a swarm's record has none). */
export const WorkflowRecordSchema = z.looseObject({
  workflow: RecordedWorkflowSchema,
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable().optional(),
  logs: z.array(z.string()).optional(),
  agent_count: z.number().optional(),
});

export type WorkflowRecordFields = {
  workflow: { name: string; description: string; args: unknown; cwd: string; budget_tokens: number | null; max_agents: number | null };
  result: unknown;
  error: { code: string; message: string } | null;
  logs: string[];
  agent_count: number;
};

/** What a script was run with, as its record keeps it. */
export interface WorkflowSettings {
  args: unknown;
  cwd: string;
  budgetTokens: number | undefined;
  maxAgents: number | undefined;
}

/** The record's workflow fields: the script's settings, and how it ended (nothing yet while it runs). */
export function workflowFieldsOf(meta: WorkflowMeta, settings: WorkflowSettings, outcome: WorkflowOutcome | undefined): WorkflowRecordFields {
  return {
    workflow: {
      name: meta.name,
      description: meta.description,
      args: settings.args ?? null,
      cwd: settings.cwd,
      budget_tokens: settings.budgetTokens ?? null,
      max_agents: settings.maxAgents ?? null,
    },
    result: outcome?.ok ? (outcome.result ?? null) : null,
    error: outcome?.error ?? null,
    logs: outcome?.logs ?? [],
    agent_count: outcome?.agentCount ?? 0,
  };
}

/** The settings a record says its script ran with (and its dollar budget), or undefined for a swarm's record. */
export function recordedWorkflowSettings(record: unknown): (Partial<WorkflowSettings> & { name: string; budgetUsd: number | undefined }) | undefined {
  const parsed = WorkflowRecordSchema.safeParse(record);
  if (!parsed.success) return undefined;
  const { workflow } = parsed.data;
  const budgetUsd = (record as { budget_usd?: unknown }).budget_usd;
  return {
    name: workflow.name,
    args: workflow.args ?? null,
    ...(workflow.cwd !== undefined && { cwd: workflow.cwd }),
    budgetTokens: workflow.budget_tokens ?? undefined,
    maxAgents: workflow.max_agents ?? undefined,
    budgetUsd: typeof budgetUsd === "number" ? budgetUsd : undefined,
  };
}
