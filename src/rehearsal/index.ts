export { startRehearsalServer, RehearsalServer } from "./server.ts";
export type { RecordedRequest, RehearsalOutcome, RehearsalServerOptions } from "./server.ts";
export {
  loadRehearsalScripts,
  RehearsalFailSchema,
  RehearsalScriptError,
  RehearsalScriptSchema,
  RehearsalScriptsSchema,
  RehearsalStepSchema,
  RehearsalToolUseSchema,
} from "./script.ts";
export type {
  RehearsalFail,
  RehearsalScript,
  RehearsalScriptInput,
  RehearsalScripts,
  RehearsalScriptsInput,
  RehearsalStep,
  RehearsalToolUse,
} from "./script.ts";
export { offlineClaudeEnv, REHEARSAL_API_KEY } from "./env.ts";
export type { OfflineClaudeEnvOptions } from "./env.ts";
export {
  agentScriptName,
  parseAgentScriptName,
  rehearsalScriptFor,
  startRehearsalRig,
  type AgentSessionKind,
  type RehearsalRig,
  type ScriptedWorker,
} from "./rig.ts";
