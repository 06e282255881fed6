/**
 * `system` messages (CLI → host), one schema per `subtype`. parse.ts dispatches on
 * the subtype; an unlisted subtype becomes an UnknownMessage.
 */
import { z } from "zod";
import { WorkflowProgressEntrySchema } from "./background.ts";
import { SlashCommandSchema } from "./control-responses.ts";

/** Fields every system message has, plus the subtype-specific shape. */
function system<S extends string, T extends z.ZodRawShape>(subtype: S, shape: T) {
  return z.looseObject({
    type: z.literal("system"),
    subtype: z.literal(subtype),
    session_id: z.string(),
    uuid: z.string().optional(),
    ...shape,
  });
}

/** What a background task used: so far (task_progress) or in all (task_notification). */
export const TaskUsageSchema = z.looseObject({
  total_tokens: z.number(),
  tool_uses: z.number(),
  duration_ms: z.number(),
});
export type TaskUsage = z.infer<typeof TaskUsageSchema>;

/** First message of a session (after the first user message arrives). */
export const SystemInitMessageSchema = system("init", {
  cwd: z.string(),
  model: z.string(),
  tools: z.array(z.string()),
  mcp_servers: z.array(z.looseObject({ name: z.string(), status: z.string(), source: z.string().optional() })),
  permissionMode: z.string(),
  apiKeySource: z.string().optional(),
  claude_code_version: z.string().optional(),
  slash_commands: z.array(z.string()).optional(),
  /** Names of the subagents available, including those given in `initialize.agents`. */
  agents: z.array(z.string()).optional(),
  skills: z.array(z.unknown()).optional(),
  plugins: z.array(z.looseObject({ name: z.string(), path: z.string() })).optional(),
  output_style: z.string().optional(),
  betas: z.array(z.string()).optional(),
});
export type SystemInitMessage = z.infer<typeof SystemInitMessageSchema>;

/** status "requesting" (API call under way), "compacting", or null (idle again / mode change). */
export const StatusMessageSchema = system("status", {
  status: z.string().nullable(),
  permissionMode: z.string().optional(),
  compact_result: z.string().optional(),
  compact_error: z.string().optional(),
});
export type StatusMessage = z.infer<typeof StatusMessageSchema>;

export const CompactBoundaryMessageSchema = system("compact_boundary", {
  compact_metadata: z.looseObject({
    trigger: z.string(),
    pre_tokens: z.number(),
    post_tokens: z.number().optional(),
    duration_ms: z.number().optional(),
  }),
});
export type CompactBoundaryMessage = z.infer<typeof CompactBoundaryMessageSchema>;

/** A retryable API failure (HTTP 429/529/5xx, connection error): the CLI waits retry_delay_ms and tries again. */
export const ApiRetryMessageSchema = system("api_retry", {
  attempt: z.number(),
  max_retries: z.number(),
  retry_delay_ms: z.number(),
  /** HTTP status; null for connection errors without a response. */
  error_status: z.number().nullable(),
  /** "rate_limit" | "overloaded" | "server_error" | "unknown" | …. */
  error: z.string(),
  no_response: z.looseObject({ waited_ms: z.number(), retry_wait_ms: z.number() }).optional(),
});
export type ApiRetryMessage = z.infer<typeof ApiRetryMessageSchema>;

// Settings-file hooks (command hooks), reported with --include-hook-events.
const hookFields = { hook_id: z.string().optional(), hook_name: z.string(), hook_event: z.string() };
export const HookStartedMessageSchema = system("hook_started", hookFields);
export type HookStartedMessage = z.infer<typeof HookStartedMessageSchema>;
export const HookProgressMessageSchema = system("hook_progress", {
  ...hookFields,
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  output: z.string().optional(),
});
export type HookProgressMessage = z.infer<typeof HookProgressMessageSchema>;
export const HookResponseMessageSchema = system("hook_response", {
  ...hookFields,
  output: z.string().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  exit_code: z.number().optional(),
  /** "success" | "error" | "cancelled". */
  outcome: z.string().optional(),
});
export type HookResponseMessage = z.infer<typeof HookResponseMessageSchema>;

// Tasks: subagents (local_agent), shell commands (local_bash), workflows (local_workflow), monitors.
// run_id names one run of a task on every task_* message, background_tasks_changed entry and
// the origin of the turn its notification starts (measured on CLI 2.1.332).
const taskRun = { task_id: z.string(), run_id: z.string().optional(), tool_use_id: z.string().optional() };
export const TaskStartedMessageSchema = system("task_started", {
  ...taskRun,
  description: z.string(),
  task_type: z.string().optional(),
  subagent_type: z.string().optional(),
  is_backgrounded: z.boolean().optional(),
  prompt: z.string().optional(),
  /** meta.name of a workflow's script. */
  workflow_name: z.string().optional(),
  /** The subagent task that launched this one; absent when the main thread did. */
  parent_task_id: z.string().optional(),
  spawn_depth: z.number().optional(),
  /** Housekeeping, not activity. */
  ambient: z.boolean().optional(),
});
export type TaskStartedMessage = z.infer<typeof TaskStartedMessageSchema>;
export const TaskProgressMessageSchema = system("task_progress", {
  ...taskRun,
  description: z.string().optional(),
  subagent_type: z.string().optional(),
  last_tool_name: z.string().optional(),
  summary: z.string().optional(),
  usage: TaskUsageSchema.optional(),
  /** A workflow's phases and agents, the whole list each time. */
  workflow_progress: z.array(WorkflowProgressEntrySchema).optional(),
});
export type TaskProgressMessage = z.infer<typeof TaskProgressMessageSchema>;
export const TaskUpdatedMessageSchema = system("task_updated", {
  ...taskRun,
  patch: z.looseObject({
    status: z.string().optional(),
    error: z.string().optional(),
    end_time: z.number().optional(),
    is_backgrounded: z.boolean().optional(),
  }),
});
export type TaskUpdatedMessage = z.infer<typeof TaskUpdatedMessageSchema>;
export const TaskNotificationMessageSchema = system("task_notification", {
  ...taskRun,
  /** "completed" | "failed" | "stopped". */
  status: z.string(),
  summary: z.string().optional(),
  /** Where the task's output is: a shell's text, an agent's report, a workflow's JSON (WorkflowOutputFileSchema). */
  output_file: z.string().optional(),
  usage: TaskUsageSchema.optional(),
});
export type TaskNotificationMessage = z.infer<typeof TaskNotificationMessageSchema>;
/** The whole set of live background tasks (replace, do not merge). */
export const BackgroundTaskEntrySchema = z.looseObject({
  task_id: z.string(),
  run_id: z.string().optional(),
  task_type: z.string(),
  description: z.string(),
  subagent_type: z.string().optional(),
  parent_task_id: z.string().optional(),
  ambient: z.boolean().optional(),
});
export type BackgroundTaskEntry = z.infer<typeof BackgroundTaskEntrySchema>;
export const BackgroundTasksChangedMessageSchema = system("background_tasks_changed", {
  tasks: z.array(BackgroundTaskEntrySchema),
});
export type BackgroundTasksChangedMessage = z.infer<typeof BackgroundTasksChangedMessageSchema>;

export const InformationalMessageSchema = system("informational", {
  content: z.string(),
  level: z.string(),
  prevent_continuation: z.boolean().optional(),
});
export const LocalCommandOutputMessageSchema = system("local_command_output", { content: z.string() });
/** A tool call refused without asking (deny rule, dontAsk mode, classifier). */
export const PermissionDeniedMessageSchema = system("permission_denied", {
  tool_name: z.string(),
  tool_use_id: z.string(),
  message: z.string(),
  agent_id: z.string().optional(),
  decision_reason_type: z.string().optional(),
  decision_reason: z.string().optional(),
});
/**
 * Sent with CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1. Measured on CLI 2.1.332: "running" as a
 * turn starts; "idle" once its result is out and no background agent or workflow holds the
 * session (a background shell does not: its notification starts a turn of its own later).
 */
export const SessionStateChangedMessageSchema = system("session_state_changed", {
  /** "idle" | "running" | "requires_action". */
  state: z.string(),
});
export const NotificationMessageSchema = system("notification", {
  key: z.string(),
  text: z.string(),
  priority: z.string().optional(),
});
export const ThinkingTokensMessageSchema = system("thinking_tokens", {
  estimated_tokens: z.number(),
  estimated_tokens_delta: z.number(),
});
export const CommandsChangedMessageSchema = system("commands_changed", { commands: z.array(SlashCommandSchema) });
export const FilesPersistedMessageSchema = system("files_persisted", {
  files: z.array(z.looseObject({ filename: z.string(), file_id: z.string() })),
  failed: z.array(z.looseObject({ filename: z.string(), error: z.string() })),
});
export const ElicitationCompleteMessageSchema = system("elicitation_complete", {
  mcp_server_name: z.string(),
  elicitation_id: z.string(),
});
export const PluginInstallMessageSchema = system("plugin_install", {
  status: z.string(),
  name: z.string().optional(),
  error: z.string().optional(),
});
const refusalFields = { original_model: z.string(), content: z.string(), request_id: z.string().nullable().optional() };
export const ModelRefusalFallbackMessageSchema = system("model_refusal_fallback", {
  ...refusalFields,
  fallback_model: z.string(),
});
export const ModelRefusalNoFallbackMessageSchema = system("model_refusal_no_fallback", refusalFields);
export const ControlRequestProgressMessageSchema = system("control_request_progress", {
  request_id: z.string(),
  status: z.string(),
});
export const WorkerShuttingDownMessageSchema = system("worker_shutting_down", { reason: z.string() });
export const MemoryRecallMessageSchema = system("memory_recall", {
  mode: z.string(),
  memories: z.array(z.looseObject({ path: z.string() })),
});
export const MirrorErrorMessageSchema = system("mirror_error", { error: z.string() });
export const SessionWritesLostMessageSchema = system("session_writes_lost", {
  error_code: z.string(),
  lost: z.array(z.string()),
});

/** Every known system message schema, keyed by subtype (parse.ts dispatches on it). */
export const SYSTEM_MESSAGE_SCHEMAS = {
  init: SystemInitMessageSchema,
  status: StatusMessageSchema,
  compact_boundary: CompactBoundaryMessageSchema,
  api_retry: ApiRetryMessageSchema,
  hook_started: HookStartedMessageSchema,
  hook_progress: HookProgressMessageSchema,
  hook_response: HookResponseMessageSchema,
  task_started: TaskStartedMessageSchema,
  task_progress: TaskProgressMessageSchema,
  task_updated: TaskUpdatedMessageSchema,
  task_notification: TaskNotificationMessageSchema,
  background_tasks_changed: BackgroundTasksChangedMessageSchema,
  informational: InformationalMessageSchema,
  local_command_output: LocalCommandOutputMessageSchema,
  permission_denied: PermissionDeniedMessageSchema,
  session_state_changed: SessionStateChangedMessageSchema,
  notification: NotificationMessageSchema,
  thinking_tokens: ThinkingTokensMessageSchema,
  commands_changed: CommandsChangedMessageSchema,
  files_persisted: FilesPersistedMessageSchema,
  elicitation_complete: ElicitationCompleteMessageSchema,
  plugin_install: PluginInstallMessageSchema,
  model_refusal_fallback: ModelRefusalFallbackMessageSchema,
  model_refusal_no_fallback: ModelRefusalNoFallbackMessageSchema,
  control_request_progress: ControlRequestProgressMessageSchema,
  worker_shutting_down: WorkerShuttingDownMessageSchema,
  memory_recall: MemoryRecallMessageSchema,
  mirror_error: MirrorErrorMessageSchema,
  session_writes_lost: SessionWritesLostMessageSchema,
} as const;

type SystemSchemas = typeof SYSTEM_MESSAGE_SCHEMAS;
/** Any known system message; `switch (m.subtype)` narrows. */
export type SystemMessage = { [K in keyof SystemSchemas]: z.infer<SystemSchemas[K]> }[keyof SystemSchemas];
