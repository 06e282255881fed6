export { Orchestrator } from "./orchestrator.ts";
export * from "./errors.ts";
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
export type { AgentSpec } from "./compose.ts";
export { cacheReadShare } from "./accounting.ts";
export type { RateLimitState } from "./scheduler/index.ts";
export { Session, type PendingPermission, type SessionPermissions, type SessionSpec, type SessionStatus } from "./session.ts";
