export { Orchestrator } from "./orchestrator.ts";
export * from "./errors.ts";
export type {
  BudgetLedger,
  HookAction,
  OrchestratorEvent,
  OrchestratorOptions,
  RoutedHook,
  RoutedPermissionHandler,
  TaskInfo,
  TaskResult,
  TaskRunner,
  TaskSpec,
  TaskStatus,
  Usage,
  WorkerContext,
} from "./types.ts";
export { TaskSpecSchema } from "./types.ts";
export type { AgentSpec } from "./compose.ts";
export type { RateLimitState } from "./scheduler/index.ts";
export { Session, type PendingPermission, type SessionPermissions, type SessionSpec, type SessionStatus } from "./session.ts";
export type { InboxMessage } from "./peers/directory.ts";
export { type InboxStore, MemoryInbox } from "./peers/inbox.ts";
