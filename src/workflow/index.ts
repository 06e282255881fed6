/** Workflow scripts (Claude Code's dynamic-workflow dialect): the before-launch checks, the sandbox, the runner. */

export { workflowArgs } from "./args.ts";
export { type AgentCall, type AgentOptions, type CallStatus, type RecordedCall, RecordedCallSchema } from "./calls.ts";
export { type CheckedScript, checkWorkflowScript, inspectWorkflowScript, type ScriptInspection } from "./check.ts";
export { CLAUDE_CODE_KEY_VERSION } from "./claude-code-keys.ts";
export { type WorkflowLimit, WorkflowLimitError, WorkflowScriptError, WorkflowScriptFailedError } from "./errors.ts";
export { framePrompt } from "./frame.ts";
export { type WorkflowMeta, WorkflowMetaSchema, type WorkflowPhase } from "./meta.ts";
export {
  AgentCallError,
  DEFAULT_MAX_AGENTS,
  runWorkflowScript,
  succeededValue,
  type WorkflowAgentRunner,
  type WorkflowEvent,
  type WorkflowOutcome,
  type WorkflowRunOptions,
} from "./runner.ts";
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from "./sandbox-contract.ts";
export { warmSandboxThread } from "./sandbox-threads.ts";
export { findSavedWorkflow, readWorkflowRef, type SavedWorkflowPlaces, savedWorkflowFiles, type WorkflowSource } from "./saved.ts";
export { BUILT_IN_AGENT_TYPES, type IsolatedWorker, plainCallSpec, taskSpecForCall } from "./task-spec.ts";
