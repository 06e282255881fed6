export { cacheReadShare } from "./accounting.ts";
export type { AgentSpec } from "./compose.ts";
export * from "./errors.ts";
export { Orchestrator } from "./orchestrator.ts";
export type { RateLimitState } from "./scheduler/index.ts";
export { type PendingPermission, Session, type SessionPermissions, type SessionSpec, type SessionStatus } from "./session.ts";
export type {
  HookAction,
  OrchestratorEvent,
  OrchestratorOptions,
  RoutedHook,
  RoutedPermissionHandler,
  TaskInfo,
  TaskResult,
  TaskSpec,
  TaskStatus,
  Usage,
  WorkerContext,
} from "./types.ts";
export { TaskSpecSchema } from "./types.ts";
