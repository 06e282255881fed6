// A task's background tasks (workflows, agents, shells) as summary.json keeps them, in snake_case, and back.
import { z } from "zod";
import type { BackgroundTask } from "../../orchestrator/index.ts";

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

/** One background task of a task's session, as it ended (or "stopped" when the task ended first). */
export const SummaryBackgroundTaskSchema = z.looseObject({
  id: z.string(),
  /** The CLI's task_type: local_workflow, local_agent, local_bash, monitor, …. */
  kind: z.string(),
  description: z.string(),
  /** completed, failed or stopped; running only while the run goes on. */
  status: z.string(),
  usage: z.looseObject({ total_tokens: z.number(), tool_uses: z.number(), duration_ms: z.number() }).nullable(),
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

export function recordBackgroundTask(task: BackgroundTask): SummaryBackgroundTask {
  return {
    id: task.id,
    kind: task.kind,
    description: task.description,
    status: task.status,
    usage: task.usage ? { total_tokens: task.usage.totalTokens, tool_uses: task.usage.toolUses, duration_ms: task.usage.durationMs } : null,
    ...(task.workflowName !== undefined && { workflow_name: task.workflowName }),
    ...(task.phases && { phases: task.phases }),
    ...(task.agents && {
      agents: task.agents.map((agent) => ({
        index: agent.index,
        label: agent.label ?? null,
        phase: agent.phase ?? null,
        agent_id: agent.agentId ?? null,
        state: agent.state,
        tokens: agent.tokens ?? null,
        tool_calls: agent.toolCalls ?? null,
        duration_ms: agent.durationMs ?? null,
      })),
    }),
    summary: task.summary ?? null,
    output_file: task.outputFile ?? null,
    ...(task.result !== undefined && { result: task.result }),
    error: task.error ?? null,
  };
}

export function backgroundTaskFromRecord(task: SummaryBackgroundTask): BackgroundTask {
  return {
    id: task.id,
    kind: task.kind,
    description: task.description,
    status: task.status,
    usage: task.usage ? { totalTokens: task.usage.total_tokens, toolUses: task.usage.tool_uses, durationMs: task.usage.duration_ms } : undefined,
    workflowName: task.workflow_name ?? undefined,
    phases: task.phases,
    agents: task.agents?.map((agent) => ({
      index: agent.index,
      label: agent.label ?? undefined,
      phase: agent.phase ?? undefined,
      agentId: agent.agent_id ?? undefined,
      state: agent.state,
      tokens: agent.tokens ?? undefined,
      toolCalls: agent.tool_calls ?? undefined,
      durationMs: agent.duration_ms ?? undefined,
    })),
    summary: task.summary ?? undefined,
    outputFile: task.output_file ?? undefined,
    result: task.result,
    error: task.error ?? undefined,
  };
}
