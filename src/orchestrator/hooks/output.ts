// Reads a hook command's stdout as Claude Code does: one JSON object is its answer, other text is context.
import { type HookOutput, SyncHookOutputSchema } from "../../protocol/index.ts";
import { HookOutputError } from "./errors.ts";
import { plainStdoutResult } from "./results.ts";

/**
 * Reads the stdout of a command that exited 0, as Claude Code does: when the
 * whole output is one JSON object it is the hook's answer; other text is
 * context for the events that take it, and ignored elsewhere.
 */
export function parseCommandOutput(command: string, event: string, stdout: string): HookOutput {
  const text = stdout.trim();
  if (!text.startsWith("{")) return plainStdoutResult(event, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new HookOutputError(command, `its stdout starts like JSON and is not: ${(cause as Error).message}`, text, cause);
  }
  // Checked as the CLI checks it (claude 2.1.330 throws on an unknown decision or malformed event fields).
  const parsed = SyncHookOutputSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    throw new HookOutputError(command, `its JSON is not hook output (${problems.join("; ")})`, text, parsed.error);
  }
  const eventName = parsed.data.hookSpecificOutput?.hookEventName;
  if (eventName !== undefined && eventName !== event) {
    throw new HookOutputError(command, `its hookSpecificOutput names the event "${eventName}" but it ran for "${event}"`, text);
  }
  return parsed.data;
}
