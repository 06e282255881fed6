export type { Divergence } from "./divergence.ts";
export type { OfflineClaudeEnvOptions } from "./env.ts";
export { offlineClaudeEnv, REHEARSAL_API_KEY } from "./env.ts";
export {
  type AgentSessionKind,
  agentScriptName,
  parseAgentScriptName,
  patternOf,
  type RecordedConversations,
  type RehearsalRig,
  rehearsalScriptFor,
  type ScriptedWorker,
  startRehearsalRig,
} from "./rig.ts";
export type {
  RehearsalExpect,
  RehearsalFail,
  RehearsalScript,
  RehearsalScriptInput,
  RehearsalScripts,
  RehearsalScriptsInput,
  RehearsalStep,
  RehearsalToolUse,
} from "./script.ts";
export {
  loadRehearsalScripts,
  RehearsalFailSchema,
  RehearsalScriptError,
  RehearsalScriptSchema,
  RehearsalScriptsSchema,
  RehearsalStepSchema,
  RehearsalToolUseSchema,
} from "./script.ts";
export type { RecordedRequest, RehearsalOutcome, RehearsalServerOptions } from "./server.ts";
export { RehearsalServer, startRehearsalServer } from "./server.ts";
