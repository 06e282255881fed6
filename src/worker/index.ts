export { Worker, type WorkerEvent, type WorkerListener, type WorkerState } from "./worker.ts";
export { Turn, type Prompt, type TurnResult } from "./turn.ts";
export * from "./errors.ts";
export { locateClaude } from "./locate-cli.ts";
export { resetConversation, type ConversationReset } from "./reset.ts";
export type { AgentDefinition, ExternalMcpServer, PermissionMode, SettingSource, WorkerOptions } from "./options.ts";
export type { HookCallback, HookConfig, HookContext, HookInput, HookMatcher, HookResult } from "./hooks.ts";
export {
  askUserQuestion,
  planReview,
  policyDecision,
  type PermissionDecision,
  type PermissionHandler,
  type PermissionPolicy,
  type PermissionRequest,
  type Question,
} from "./permissions.ts";
