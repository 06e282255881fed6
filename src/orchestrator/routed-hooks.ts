// A swarm's hooks made callbacks: policies, commands and supervisor agents, each with its limit and fallback.
import { HookEventSchema, type HookInput, type HookOutput } from "../protocol/index.ts";
import type { HookCallback, HookConfig } from "../worker/index.ts";
import { errorSummary } from "./failure.ts";
import { allowResult, commandHook, denyResult, policyHook, withFallback } from "./hooks/index.ts";
import type { HookDecision, OrchestratorOptions, RoutedHook } from "./types.ts";

/** Asks a supervisor agent and resolves with its final text. */
export type AskSupervisor = (agent: string, prompt: string, signal: AbortSignal) => Promise<string>;

/** A hook's limit when it names none. The one timer is withFallback's: it reports `hook_failed` and answers with on_error. */
const DEFAULT_HOOK_TIMEOUT_MS = 30_000;

function supervisorPrompt(input: HookInput): string {
  return [
    `A worker wants to go ahead with a "${input.hook_event_name}" event.`,
    input.tool_name ? `Tool: ${input.tool_name}` : undefined,
    input.tool_input !== undefined ? `Input: ${JSON.stringify(input.tool_input)}` : undefined,
    "",
    "Decide. Answer with ALLOW or DENY as the first word, then one sentence of reason.",
  ]
    .filter((line) => line !== undefined)
    .join("\n");
}

/** ALLOW or DENY as the first word; anything else is not a decision. */
export function parseSupervisorAnswer(text: string): { allow: boolean; reason: string } {
  const match = /^\W*(ALLOW|DENY)\b[\s:.,-]*(.*)$/is.exec(text.trim());
  if (!match) throw new Error(`the supervisor did not answer ALLOW or DENY: "${text.slice(0, 200)}"`);
  return { allow: match[1]!.toUpperCase() === "ALLOW", reason: match[2]!.trim() || "(no reason given)" };
}

export function supervisorHook(agent: string, ask: AskSupervisor): HookCallback {
  return async (input, { signal }) => {
    const answer = parseSupervisorAnswer(await ask(agent, supervisorPrompt(input), signal));
    const reason = `supervisor ${agent}: ${answer.reason}`;
    return answer.allow ? allowResult(input.hook_event_name, reason) : denyResult(input.hook_event_name, reason);
  };
}

/** Which kind of action a routed hook is, for its decision's event. */
export function hookActionKind(hook: RoutedHook): "callback" | "command" | "policy" | "supervisor" {
  if ("callback" in hook) return "callback";
  if ("command" in hook) return "command";
  return "policy" in hook ? "policy" : "supervisor";
}

/** A hook's answer in one word: deny, allow, or none (no opinion). */
function decisionOf(output: HookOutput): "allow" | "deny" | "none" {
  if ("async" in output) return "none";
  const specific = output.hookSpecificOutput as { permissionDecision?: unknown } | undefined;
  if (output.decision === "block" || specific?.permissionDecision === "deny" || output.continue === false) return "deny";
  if (output.decision === "approve" || specific?.permissionDecision === "allow") return "allow";
  return "none";
}

function actionCallback(hook: RoutedHook, ask: AskSupervisor, cwd: string | undefined): HookCallback {
  if ("callback" in hook) return hook.callback;
  if ("command" in hook) return commandHook(hook.command, { cwd });
  if ("policy" in hook) return policyHook(hook.policy);
  return supervisorHook(hook.supervisor, ask);
}

/**
 * Turns the orchestrator's one hook registry into a worker's HookConfig:
 * every action wrapped so that a failure or time-out answers with its
 * fallback (deny unless told otherwise) and is reported.
 */
export function routedHookConfig(
  hooks: OrchestratorOptions["hooks"],
  options: {
    ask: AskSupervisor;
    cwd: string | undefined;
    onFailure: (event: string, error: { code: string; message: string }) => void;
    /** Every answer, the fallback's included: for the run's events (and so its traces). */
    onDecision?: (decision: HookDecision) => void;
  },
): HookConfig | undefined {
  if (!hooks) return undefined;
  const config: HookConfig = {};
  for (const event of HookEventSchema.options) {
    const routed = hooks[event];
    if (!routed) continue;
    config[event] = routed.map((hook) => {
      const timeoutMs = hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
      const guarded = withFallback(actionCallback(hook, options.ask, options.cwd), {
        onError: hook.onError ?? "deny",
        timeoutMs,
        onFailure: (error) => options.onFailure(event, errorSummary(error)),
      });
      const action = hookActionKind(hook);
      const callback: HookCallback = async (input, context) => {
        const startedAt = Date.now();
        const output = await guarded(input, context);
        options.onDecision?.({ event, action, decision: decisionOf(output), toolName: input.tool_name, startedAt, finishedAt: Date.now() });
        return output;
      };
      return {
        ...(hook.matcher !== undefined && { matcher: hook.matcher }),
        hooks: [callback],
        // The CLI's limit, and the worker's wait for the callback (derived from it), come
        // after cadre's, so cadre's fallback answers first.
        timeoutSeconds: Math.ceil(timeoutMs / 1000) + 5,
        onFailure: hook.onError === "allow" ? "continue" : "block",
      };
    });
  }
  return config;
}
