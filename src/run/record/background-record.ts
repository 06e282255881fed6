// A task's background tasks (workflows, agents, shells) as summary.json keeps them, in snake_case, and back.
import { z } from "zod";
import { type BackgroundTask, type TaskUsage, TaskUsageSchema, type WorkflowAgent } from "../../orchestrator/index.ts";

const SummaryWorkflowAgentSchema = z.looseObject({
  index: z.number(),
  label: z.string().nullable(),
  phase: z.string().nullable(),
  agent_id: z.string().nullable(),
  state: z.string(),
  tokens: z.number().nullable(),
  tool_calls: z.number().nullable(),
  duration_ms: z.number().nullable(),
});
type SummaryWorkflowAgent = z.infer<typeof SummaryWorkflowAgentSchema>;

/** One background task of a task's session, as it ended (or "stopped" when the task ended first). */
export const SummaryBackgroundTaskSchema = z.looseObject({
  id: z.string(),
  /** The CLI's task_type: local_workflow, local_agent, local_bash, monitor, …. */
  kind: z.string(),
  description: z.string(),
  /** completed, failed or stopped; running only while the run goes on. */
  status: z.string(),
  /** As the CLI reports it. */
  usage: TaskUsageSchema.nullable(),
  workflow_name: z.string().nullable().optional(),
  /** A workflow's phases and agents. */
  phases: z.array(z.string()).optional(),
  agents: z.array(SummaryWorkflowAgentSchema).optional(),
  summary: z.string().nullable(),
  output_file: z.string().nullable(),
  /** A workflow's return value, from the output file the CLI wrote. */
  result: z.unknown().optional(),
  error: z.string().nullable(),
});
export type SummaryBackgroundTask = z.infer<typeof SummaryBackgroundTaskSchema>;

type Usage = NonNullable<BackgroundTask["usage"]>;

/**
 * Where each field goes in the record: the same value under its snake_case name (null: not kept). The compiler checks
 * that every field is placed; usage and agents are shapes of their own, placed by their maps in turn.
 */
const TASK_KEYS = {
  id: "id",
  kind: "kind",
  description: "description",
  status: "status",
  usage: "usage",
  workflowName: "workflow_name",
  phases: "phases",
  agents: "agents",
  summary: "summary",
  outputFile: "output_file",
  result: "result",
  error: "error",
  runId: null,
  toolUseId: null,
  parentTaskId: null,
} as const satisfies Record<keyof BackgroundTask, keyof SummaryBackgroundTask | null>;
const AGENT_KEYS = {
  index: "index",
  label: "label",
  phase: "phase",
  agentId: "agent_id",
  state: "state",
  tokens: "tokens",
  toolCalls: "tool_calls",
  durationMs: "duration_ms",
} as const satisfies Record<keyof WorkflowAgent, keyof SummaryWorkflowAgent>;
const USAGE_KEYS = {
  totalTokens: "total_tokens",
  toolUses: "tool_uses",
  durationMs: "duration_ms",
} as const satisfies Record<keyof Usage, keyof TaskUsage>;

/** The fields a record leaves out when they are absent; it writes the others as null. */
const LEFT_OUT_WHEN_ABSENT = new Set<string>(["workflowName", "phases", "agents", "result"]);

/** `value`'s fields under their names in `keys`. */
function toRecord(value: object, keys: Record<string, string | null>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [from, to] of Object.entries(keys)) {
    const field = (value as Record<string, unknown>)[from];
    if (to === null || (field === undefined && LEFT_OUT_WHEN_ABSENT.has(from))) continue;
    record[to] = field ?? null;
  }
  return record;
}

/** The other way: a record's fields under the names `keys` maps them from, null as absent. */
function fromRecord(record: object, keys: Record<string, string | null>): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const [to, from] of Object.entries(keys)) if (from !== null) value[to] = (record as Record<string, unknown>)[from] ?? undefined;
  return value;
}

export function recordBackgroundTask(task: BackgroundTask): SummaryBackgroundTask {
  return {
    ...toRecord(task, TASK_KEYS),
    usage: task.usage ? toRecord(task.usage, USAGE_KEYS) : null,
    ...(task.agents && { agents: task.agents.map((agent) => toRecord(agent, AGENT_KEYS)) }),
  } as SummaryBackgroundTask;
}

export function backgroundTaskFromRecord(task: SummaryBackgroundTask): BackgroundTask {
  return {
    ...fromRecord(task, TASK_KEYS),
    usage: task.usage ? fromRecord(task.usage, USAGE_KEYS) : undefined,
    agents: task.agents?.map((agent) => fromRecord(agent, AGENT_KEYS)),
    // A workflow's value: null is one.
    result: task.result,
  } as BackgroundTask;
}
