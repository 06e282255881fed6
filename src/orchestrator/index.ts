// Shapes of the protocol other layers read from here: replies.jsonl's (the rehearsal server reads its digests too), the
// effort a task asks for (a workflow's agent() call names it too), a background task's usage (summary.json keeps it as the CLI says it).
export {
  EffortLevelSchema,
  type PromptLine,
  PromptLineSchema,
  REPLIES_FILE,
  type RecordedToolResult,
  RepliesHeaderSchema,
  type ReplyLine,
  ReplyLineSchema,
  type Seen,
  type TaskUsage,
  TaskUsageSchema,
  type ToolResultsLine,
  ToolResultsLineSchema,
} from "../protocol/index.ts";
// A task's background tasks are the worker's own records of them (src/worker/background.ts).
export type { BackgroundTask, WorkflowAgent } from "../worker/index.ts";
export { addUsage, cacheReadShare, cacheSavingUsd, emptyUsage } from "./accounting.ts";
export { remainingOf, spentBudgetOf } from "./budget.ts";
export type { TaskBudget } from "./budgets.ts";
export { layerWorkerOptions, taskWorkerOptions } from "./compose.ts";
export * from "./errors.ts";
export { errorSummary } from "./failure.ts";
export { HookPolicySchema } from "./hooks/index.ts";
export { DEFAULT_CONCURRENCY, DEFAULT_RETRIES, Orchestrator } from "./orchestrator.ts";
export type { InboxMessage } from "./peers/directory.ts";
export type { InboxStore } from "./peers/inbox.ts";
export { PEER_SERVER_NAME } from "./peers/peer-server.ts";
export type { SteerOrigin } from "./running-tasks.ts";
export type { RateLimitState } from "./scheduler/index.ts";
export { AdaptiveLimit, AutoConcurrency, MAX_AUTO_CONCURRENCY, type MachineProbe, Scheduler } from "./scheduler/index.ts";
export { DEFAULT_PERMISSION_TIMEOUT_MS, type PendingPermission, Session, type SessionPermissions, type SessionSpec } from "./session.ts";
export { sessionIdOf } from "./session-records.ts";
export { TranscriptDirectory } from "./transcripts.ts";
export type {
  AgentSpec,
  AgentTurn,
  BoardResult,
  BoardTask,
  BudgetScope,
  BudgetUse,
  HookAction,
  OrchestratorEvent,
  OrchestratorOptions,
  PlanWindowNews,
  ProcessSetup,
  ReuseOption,
  RoutedHook,
  RoutedPermissionHandler,
  SessionRecord,
  SessionStatus,
  SpendingLedger,
  SteerAction,
  TaskBoard,
  TaskInfo,
  TaskPost,
  TaskResult,
  TaskRunner,
  TaskSpec,
  TaskStatus,
  Usage,
  WorkerContext,
  WorkerOrigin,
} from "./types.ts";
export {
  BudgetScopeSchema,
  BudgetUseSchema,
  ErrorSummarySchema,
  MAX_POSTED_PROMPT_BYTES,
  SESSION_STATUSES,
  SessionRecordSchema,
  TaskResultSchema,
  TaskSpecSchema,
  TaskStatusSchema,
  UsageSchema,
} from "./types.ts";
export { resultWithoutTurn } from "./unrun.ts";
