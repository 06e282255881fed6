// The decision shapes of Claude Code's hook output: allow, deny, or no opinion.
import type { HookOutput } from "../../protocol/index.ts";

/**
 * The decision shapes of Claude Code's hook output, in one place. The CLI
 * reads a callback's answer exactly like a command hook's JSON stdout
 * (measured on claude 2.1.330), so these are also what a command's exit 2
 * turns into.
 */

/** Events where plain (non-JSON) stdout of a successful command becomes context the model reads. */
const STDOUT_IS_CONTEXT = new Set(["SessionStart", "UserPromptSubmit", "UserPromptExpansion", "PostModelSwitch"]);

/** Events whose block also drops the user's prompt, as the CLI itself spells it. */
const PROMPT_EVENTS = new Set(["UserPromptSubmit", "UserPromptExpansion"]);

/** No opinion: the CLI carries on as if the hook were not there. */
export function noOpinion(): HookOutput {
  return {};
}

/**
 * The blocking answer for `event`, with the same effect as a command hook
 * exiting 2 with `reason` on stderr: PreToolUse denies the call (the model
 * reads the reason in the tool_result), PermissionRequest denies the
 * permission, UserPromptSubmit drops the prompt, Stop and SubagentStop keep
 * the agent working with the reason as feedback, PostToolUse shows the reason
 * to the model; events that cannot be blocked show it to the user only.
 */
export function denyResult(event: string, reason: string): HookOutput {
  const result: HookOutput = { decision: "block", reason };
  if (event === "PreToolUse" || event === "PreSkillShellCommand") {
    result.hookSpecificOutput = { hookEventName: event, permissionDecision: "deny", permissionDecisionReason: reason };
  } else if (event === "PermissionRequest") {
    result.hookSpecificOutput = { hookEventName: event, decision: { behavior: "deny", message: reason } };
  } else if (PROMPT_EVENTS.has(event)) {
    result.hookSpecificOutput = { hookEventName: event, suppressOriginalPrompt: true };
  }
  return result;
}

/**
 * An explicit approval where the event has one: PreToolUse allows the call
 * without asking for permission, PermissionRequest grants it. Other events
 * have nothing to approve, so the answer is no opinion.
 */
export function allowResult(event: string, reason?: string): HookOutput {
  if (event === "PreToolUse") {
    return {
      hookSpecificOutput: {
        hookEventName: event,
        permissionDecision: "allow",
        ...(reason !== undefined && { permissionDecisionReason: reason }),
      },
    };
  }
  if (event === "PermissionRequest") return { hookSpecificOutput: { hookEventName: event, decision: { behavior: "allow" } } };
  return noOpinion();
}

/** What plain stdout of a command that exited 0 means: context for the model on some events, else nothing. */
export function plainStdoutResult(event: string, stdout: string): HookOutput {
  if (stdout === "" || !STDOUT_IS_CONTEXT.has(event)) return noOpinion();
  return { hookSpecificOutput: { hookEventName: event, additionalContext: stdout } };
}
