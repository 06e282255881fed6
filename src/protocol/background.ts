/**
 * Background work of a session (workflows, background agents and shells, monitors): the
 * progress a workflow reports, the file a finished task leaves, and the control requests
 * a host steers that work with. The system messages that announce it are in system.ts.
 */
import { z } from "zod";

/** One phase of a workflow, as its task_progress reports it. */
export const WorkflowPhaseProgressSchema = z.looseObject({
  type: z.literal("workflow_phase"),
  index: z.number(),
  title: z.string(),
});
export type WorkflowPhaseProgress = z.infer<typeof WorkflowPhaseProgressSchema>;

/** One agent() call of a workflow: queued, started ("start"), then "done" (or failed) with its tokens. */
export const WorkflowAgentProgressSchema = z.looseObject({
  type: z.literal("workflow_agent"),
  index: z.number(),
  label: z.string().optional(),
  phaseIndex: z.number().optional(),
  phaseTitle: z.string().optional(),
  /** Set once the agent has started. */
  agentId: z.string().optional(),
  model: z.string().optional(),
  /** "start" | "done" | "error" | …. */
  state: z.string(),
  tokens: z.number().optional(),
  toolCalls: z.number().optional(),
  durationMs: z.number().optional(),
  promptPreview: z.string().optional(),
  resultPreview: z.string().optional(),
});
export type WorkflowAgentProgress = z.infer<typeof WorkflowAgentProgressSchema>;

/** Measured on CLI 2.1.332: phases and agents; other entry types (logs, …) pass through. */
export const WorkflowProgressEntrySchema = z.union([WorkflowPhaseProgressSchema, WorkflowAgentProgressSchema, z.looseObject({ type: z.string() })]);
export type WorkflowProgressEntry = z.infer<typeof WorkflowProgressEntrySchema>;

/** The JSON a finished workflow writes to its task_notification's output_file. */
export const WorkflowOutputFileSchema = z.looseObject({
  summary: z.string().optional(),
  agentCount: z.number().optional(),
  logs: z.array(z.unknown()).optional(),
  result: z.unknown().optional(),
  workflowProgress: z.array(WorkflowProgressEntrySchema).optional(),
});
export type WorkflowOutputFile = z.infer<typeof WorkflowOutputFileSchema>;

/** Stops one running background task of the session (a task_id from task_started or background_tasks_changed). */
export const StopTaskRequestSchema = z.looseObject({
  subtype: z.literal("stop_task"),
  task_id: z.string(),
});
export type StopTaskRequest = z.infer<typeof StopTaskRequestSchema>;

/** Reads the end (at most 8 KiB) of a background shell's or Monitor's output; no model turn. */
export const GetTaskOutputRequestSchema = z.looseObject({
  subtype: z.literal("get_task_output"),
  task_id: z.string(),
});
export type GetTaskOutputRequest = z.infer<typeof GetTaskOutputRequestSchema>;

export const GetTaskOutputResponseSchema = z.looseObject({
  output: z.string(),
  total_bytes: z.number(),
  /** The output holds only the end of a longer one. */
  truncated: z.boolean(),
});
export type GetTaskOutputResponse = z.infer<typeof GetTaskOutputResponseSchema>;

/** Sends running foreground work (Bash commands, subagents) to the background: one tool_use's, or all (Ctrl+B). */
export const BackgroundTasksRequestSchema = z.looseObject({
  subtype: z.literal("background_tasks"),
  tool_use_id: z.string().optional(),
});
export type BackgroundTasksRequest = z.infer<typeof BackgroundTasksRequestSchema>;
