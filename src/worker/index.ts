// The worker layer's surface: what the layers above use of it.
export { type BackgroundTask, BackgroundTaskSchema, type WorkflowAgent } from "./background.ts";
export type { ControlPayload } from "./control-channel.ts";
export * from "./errors.ts";
export type { HookCallback, HookConfig, HookContext, HookMatcher } from "./hooks.ts";
export { locateClaude } from "./locate-cli.ts";
export { type ExternalMcpServer, PERMISSION_MODES, type SettingSource, type WorkerOptions } from "./options.ts";
export {
  askUserQuestion,
  type PermissionDecision,
  type PermissionHandler,
  type PermissionPolicy,
  type PermissionRequest,
  planReview,
  policyDecision,
  type Question,
} from "./permissions.ts";
export { promptPrefixKey } from "./prompt-prefix.ts";
export { type ConversationReset, resetConversation } from "./reset.ts";
export { noTokens, sessionTokens, type TokenCounts, tokensSince } from "./session-usage.ts";
export { type Prompt, Turn, type TurnResult } from "./turn.ts";
export { Worker, type WorkerEvent, type WorkerListener, type WorkerState } from "./worker.ts";
