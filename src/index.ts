// cadre's public API: the orchestrator, one worker, the swarm config, the scripted model.
export * from "./orchestrator/index.ts";
export * from "./worker/index.ts";
export { AbortError, CadreError } from "./errors.ts";
export { loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor, ConfigError } from "./swarm/config/index.ts";
export { startRehearsalRig, type RehearsalRig } from "./rehearsal/index.ts";
export { startRehearsalServer, offlineClaudeEnv, loadRehearsalScripts } from "./rehearsal/index.ts";
export type {
  AgentDefinition,
  CliMessage,
  HookInput,
  HookOutput,
  PermissionMode,
  ResultMessage,
  SystemInitMessage,
} from "./protocol/index.ts";
