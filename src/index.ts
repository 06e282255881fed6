// cadre's public API: the orchestrator, one worker, the swarm config, the scripted model.

export { AbortError, CadreError } from "./errors.ts";
export * from "./orchestrator/index.ts";
export type {
  AgentDefinition,
  CliMessage,
  HookInput,
  HookOutput,
  PermissionMode,
  ResultMessage,
  SystemInitMessage,
} from "./protocol/index.ts";
export { loadRehearsalScripts, offlineClaudeEnv, type RehearsalRig, startRehearsalRig, startRehearsalServer } from "./rehearsal/index.ts";
export { ConfigError, loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor } from "./swarm/config/index.ts";
export * from "./worker/index.ts";
