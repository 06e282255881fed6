export { commandHook, type CommandHookOptions } from "./command.ts";
export { policyHook, type HookPolicy } from "./policy.ts";
export { withFallback, type FallbackOptions } from "./fallback.ts";
export { allowResult, denyResult, noOpinion } from "./results.ts";
export { HookCommandError, HookOutputError, HookPolicyError, HookTimeoutError } from "./errors.ts";
