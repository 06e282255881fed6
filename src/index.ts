/**
 * cadre: run many Claude Code agents at once.
 *
 * - {@link Orchestrator} fans tasks out to `claude` workers under concurrency limits,
 *   with retries, time limits, a budget, one hook registry and peer tools; long
 *   conversations are its {@link Session}s.
 * - {@link Worker} is one `claude` process and session, with the whole control protocol.
 * - {@link loadSwarmConfig} reads a swarm file (YAML or JSON), as `cadre run` does.
 * - {@link startRehearsalRig} and {@link startRehearsalServer} give workers a scripted
 *   model on loopback, so code that uses cadre can be tested offline.
 *
 * Every error is a {@link CadreError} with a stable `code`.
 *
 * @module
 */

// The orchestrator: tasks, sessions, events, results.
export { Orchestrator } from "./orchestrator/index.ts";
export type {
  AgentSpec,
  HookAction,
  OrchestratorEvent,
  OrchestratorOptions,
  RateLimitState,
  RoutedHook,
  RoutedPermissionHandler,
  TaskInfo,
  TaskResult,
  TaskSpec,
  TaskStatus,
  Usage,
  WorkerContext,
} from "./orchestrator/index.ts";
export { Session } from "./orchestrator/index.ts";
export type { PendingPermission, SessionPermissions, SessionSpec, SessionStatus } from "./orchestrator/index.ts";

// One worker: a claude process and its session.
export { Worker, Turn } from "./worker/index.ts";
export type {
  AgentDefinition,
  ExternalMcpServer,
  PermissionMode,
  Prompt,
  SettingSource,
  TurnResult,
  WorkerEvent,
  WorkerListener,
  WorkerOptions,
  WorkerState,
} from "./worker/index.ts";
export type { HookCallback, HookConfig, HookContext, HookInput, HookMatcher, HookResult } from "./worker/index.ts";
export { askUserQuestion, planReview } from "./worker/index.ts";
export type { PermissionDecision, PermissionHandler, PermissionPolicy, PermissionRequest, Question } from "./worker/index.ts";

// Errors: each has a stable `code`.
export { CadreError } from "./errors.ts";
export {
  BudgetExceededError,
  InvalidTaskError,
  OrchestratorClosedError,
  TaskFailedError,
  TaskTimeoutError,
  UnknownAgentError,
} from "./orchestrator/index.ts";
export {
  AbortError,
  ClaudeNotFoundError,
  ControlRequestError,
  ControlTimeoutError,
  ProtocolError,
  WorkerClosedError,
  WorkerExitedError,
  WorkingDirectoryError,
} from "./worker/index.ts";
export type { ExitDetails } from "./worker/index.ts";

// Swarm files, as `cadre run` and `cadre validate` read them.
export { ConfigError, loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor } from "./orchestrator/config/index.ts";
export type { ConfigIssue, ConfigResult, ResolvedSwarmConfig, ResolvedTask } from "./orchestrator/config/index.ts";

// The scripted model: workers that talk to it need no account and no network.
export { startRehearsalRig, type RehearsalRig } from "./orchestrator/rehearsal-rig.ts";
export { loadRehearsalScripts, offlineClaudeEnv, RehearsalScriptError, RehearsalServer, startRehearsalServer } from "./rehearsal/index.ts";
export type {
  OfflineClaudeEnvOptions,
  RecordedRequest,
  RehearsalScript,
  RehearsalScriptInput,
  RehearsalScripts,
  RehearsalScriptsInput,
  RehearsalServerOptions,
  RehearsalStep,
} from "./rehearsal/index.ts";

// What a worker's turn yields: the CLI's stream-json messages.
export type {
  AssistantMessage,
  CliMessage,
  ContentBlock,
  ResultMessage,
  SystemInitMessage,
  SystemMessage,
  UserEchoMessage,
} from "./protocol/index.ts";
