/**
 * cadre: run many Claude Code agents at once.
 *
 * - {@link Orchestrator} fans tasks out to `claude` workers under concurrency limits,
 *   with retries, time limits, a budget, one hook registry and peer tools; long
 *   conversations are its {@link Session}s.
 * - {@link Worker} is one `claude` process and session, with the whole control protocol.
 * - {@link loadSwarmConfig} reads a swarm file (YAML or JSON), as `cadre run` does, and
 *   {@link runSwarmFile} runs one to its end and writes its record (or {@link SwarmRun}, for its events as they happen).
 * - {@link runWorkflow} runs a workflow script in Claude Code's dialect (`agent()`, `parallel()`,
 *   `pipeline()`…) on cadre's engine, sandboxed, and writes its record.
 * - {@link startRehearsalRig} and {@link startRehearsalServer} give workers a scripted
 *   model on loopback, so code that uses cadre can be tested offline.
 *
 * Every error is a {@link CadreError} with a stable `code`.
 *
 * @module
 */

// Runs on Redis hosts (`--redis`): a steered task whose host does not answer. From its own file: the layer's index names
// the host's types, which import ioredis, an optional dependency a library user's type check must not need.
export { HostNotAnsweringError } from "./distributed/errors.ts";
// Errors: CadreError is the base of every error cadre throws; each has a stable `code`.
export { AbortError, CadreError } from "./errors.ts";

// The orchestrator: tasks, sessions, their events and results, and its errors.
export type {
  AgentSpec,
  HookAction,
  OrchestratorEvent,
  OrchestratorOptions,
  PendingPermission,
  ProcessSetup,
  RateLimitState,
  ReuseOption,
  RoutedHook,
  RoutedPermissionHandler,
  SessionPermissions,
  SessionSpec,
  SessionStatus,
  SteerAction,
  SteerOrigin,
  TaskInfo,
  TaskResult,
  TaskSpec,
  TaskStatus,
  Usage,
  WorkerContext,
  WorkerOrigin,
} from "./orchestrator/index.ts";
export {
  BudgetExceededError,
  InvalidTaskError,
  Orchestrator,
  OrchestratorClosedError,
  Session,
  StructuredOutputError,
  TaskFailedError,
  TaskNotRunningError,
  TaskStoppedError,
  TaskTimeoutError,
  UnknownAgentError,
} from "./orchestrator/index.ts";

// The CLI's stream-json protocol: what a turn yields, and the shapes agents and hooks take.
export type {
  AgentDefinition,
  AssistantMessage,
  CliMessage,
  ContentBlock,
  GetTaskOutputResponse,
  HookInput,
  HookOutput,
  PermissionMode,
  ResultMessage,
  SystemInitMessage,
  SystemMessage,
  UserEchoMessage,
  WorkflowAgentProgress,
  WorkflowOutputFile,
} from "./protocol/index.ts";

// The scripted model: workers that talk to it need no account and no network.
export type {
  OfflineClaudeEnvOptions,
  RecordedRequest,
  RehearsalRig,
  RehearsalScript,
  RehearsalScriptInput,
  RehearsalScripts,
  RehearsalScriptsInput,
  RehearsalServerOptions,
  RehearsalStep,
} from "./rehearsal/index.ts";
export {
  loadRehearsalScripts,
  offlineClaudeEnv,
  RehearsalScriptError,
  RehearsalServer,
  startRehearsalRig,
  startRehearsalServer,
} from "./rehearsal/index.ts";
// Running a swarm file end to end, as `cadre run` does, without a terminal.
export type {
  ReplayOverrides,
  ReplayPlan,
  ReplayPlanOptions,
  ReplaySwarmFileOptions,
  ReplayWorkflowOptions,
  ResumePlan,
  RunChange,
  RunEvent,
  RunModelOptions,
  RunRow,
  RunStop,
  RunSwarmFileOptions,
  Summary,
  SummarySession,
  SummaryTask,
  SwarmRunOptions,
  SwarmRunResult,
  WorkflowFileRunOptions,
  WorkflowReplayPlan,
  WorkflowReplayPlanOptions,
  WorkflowRunResult,
  WorkflowSummary,
} from "./run/index.ts";
export {
  planReplay,
  planResume,
  planWorkflowReplay,
  ReplayError,
  ResumeError,
  RunModel,
  replaySwarmFile,
  replayWorkflow,
  runSwarmFile,
  runWorkflow,
  SwarmRun,
} from "./run/index.ts";
// Swarm files, as `cadre run` and `cadre validate` read them.
export type { ConfigIssue, ConfigResult, ResolvedSwarmConfig, ResolvedTask } from "./swarm/config/index.ts";
export { ConfigError, loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor } from "./swarm/config/index.ts";

// One worker: a claude process and its session; permission helpers; its errors.
export type {
  BackgroundTask,
  ConversationReset,
  ExitDetails,
  ExternalMcpServer,
  HookCallback,
  HookConfig,
  HookContext,
  HookMatcher,
  PermissionDecision,
  PermissionHandler,
  PermissionPolicy,
  PermissionRequest,
  Prompt,
  Question,
  SettingSource,
  TurnResult,
  WorkerEvent,
  WorkerListener,
  WorkerOptions,
  WorkerState,
} from "./worker/index.ts";
export {
  askUserQuestion,
  ClaudeNotFoundError,
  ControlRequestError,
  ControlTimeoutError,
  InvalidControlAnswerError,
  NoTurnRunningError,
  ProtocolError,
  planReview,
  ResetFailedError,
  resetConversation,
  Turn,
  TurnFailedError,
  Worker,
  WorkerClosedError,
  WorkerExitedError,
  WorkingDirectoryError,
} from "./worker/index.ts";
// Workflow scripts: the before-launch checks and their errors, the events of a run.
export type { AgentCall, SandboxLimits, ScriptInspection, WorkflowEvent, WorkflowMeta, WorkflowOutcome } from "./workflow/index.ts";
export {
  checkWorkflowScript,
  inspectWorkflowScript,
  WorkflowLimitError,
  WorkflowScriptError,
  WorkflowScriptFailedError,
} from "./workflow/index.ts";
