export { Worker, type WorkerEvent, type WorkerListener, type WorkerState } from "./worker.ts";
export { Turn, type Prompt, type TurnResult } from "./turn.ts";
export * from "./errors.ts";
export { locateClaude } from "./locate-cli.ts";
export type { ControlPayload } from "./control-channel.ts";
export { promptPrefixKey } from "./prompt-prefix.ts";
export { PERMISSION_MODES, type ExternalMcpServer, type SettingSource, type WorkerOptions } from "./options.ts";
export type { HookCallback, HookConfig, HookContext, HookMatcher } from "./hooks.ts";
export {
  askUserQuestion,
  planReview,
  type PermissionDecision,
  type PermissionHandler,
  type PermissionPolicy,
  type PermissionRequest,
  type Question,
} from "./permissions.ts";
