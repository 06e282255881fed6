// The hooks cadre answers itself: commands, policies, fallbacks and the shapes of their results.
export { type CommandHookOptions, commandHook } from "./command.ts";
export { HookCommandError, HookOutputError, HookPolicyError, HookTimeoutError } from "./errors.ts";
export { type FallbackOptions, withFallback } from "./fallback.ts";
export { type HookPolicy, HookPolicySchema, policyHook } from "./policy.ts";
export { allowResult, denyResult, noOpinion } from "./results.ts";
