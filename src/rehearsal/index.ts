export type { OfflineClaudeEnvOptions } from "./env.ts";
export { offlineClaudeEnv } from "./env.ts";
export { agentScriptName, parseAgentScriptName, patternOf, type RehearsalRig, startRehearsalRig } from "./rig.ts";
export type { RehearsalScript, RehearsalScriptInput, RehearsalScripts, RehearsalScriptsInput, RehearsalStep } from "./script.ts";
export { loadRehearsalScripts, RehearsalScriptError, RehearsalScriptSchema, RehearsalScriptsSchema } from "./script.ts";
export type { RecordedRequest, RehearsalServerOptions } from "./server.ts";
export { RehearsalServer, startRehearsalServer } from "./server.ts";
