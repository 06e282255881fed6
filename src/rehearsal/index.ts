// The rehearsal layer's surface: what the layers above use of it.
export type { Divergence } from "./divergence.ts";
export type { OfflineClaudeEnvOptions } from "./env.ts";
export { offlineClaudeEnv } from "./env.ts";
export {
  agentScriptName,
  parseAgentScriptName,
  patternOf,
  type RecordedConversations,
  type RehearsalRig,
  startRehearsalRig,
} from "./rig.ts";
export type { RehearsalScript, RehearsalScriptInput, RehearsalScripts, RehearsalScriptsInput, RehearsalStep } from "./script.ts";
export { loadRehearsalScripts, RehearsalScriptError, RehearsalScriptSchema, RehearsalScriptsSchema, RehearsalStepSchema } from "./script.ts";
export type { RecordedRequest, RehearsalServerOptions } from "./server.ts";
export { RehearsalServer, startRehearsalServer } from "./server.ts";
