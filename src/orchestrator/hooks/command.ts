// A hook that runs a shell command with the hook input on stdin, as Claude Code runs one.
import { AbortError } from "../../errors.ts";
import { signalGroup, startGroup } from "../../util/process-group.ts";
import type { HookCallback } from "../../worker/index.ts";
import { HookCommandError, HookOutputError, HookTimeoutError } from "./errors.ts";
import { parseCommandOutput } from "./output.ts";
import { denyResult } from "./results.ts";

export interface CommandHookOptions {
  /** Where the command runs. Default: the session's cwd from the hook input, as Claude Code does. */
  cwd?: string;
  /** Variables set for the command on top of this process's environment. */
  env?: Record<string, string | undefined>;
  /** Ends the command after this long. Default: no limit of its own; a routed hook's limit is withFallback's timer. */
  timeoutMs?: number;
}

/** A hook's answer is a line or a small JSON object; more than this is a runaway command. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

/**
 * A hook that runs a shell command line, following Claude Code's contract for
 * command hooks: the hook input is JSON on stdin; exit 0 answers with stdout
 * (a JSON object is the hook output; plain text is context on the events that
 * take it); exit 2 blocks with stderr as the reason (see `denyResult`); any
 * other exit is a non-blocking error, thrown as HookCommandError so a
 * `withFallback` wrapper decides. The command runs through a shell because the
 * user wrote a shell command line. When it exits, times out or the signal
 * aborts, its whole process group is killed, so nothing it started outlives it.
 */
export function commandHook(command: string, options: CommandHookOptions = {}): HookCallback {
  const { timeoutMs } = options;
  const what = `hook command \`${command}\``;
  return async (input, { signal }) => {
    if (signal.aborted) throw new AbortError(what, signal.reason);
    const event = input.hook_event_name;
    const cwd = options.cwd ?? input.cwd;
    // A process group of its own, watched by the reaper: it ends even if cadre is killed.
    const subprocess = startGroup(command, [], {
      shell: true,
      cwd,
      // Hooks written for Claude Code find their scripts through CLAUDE_PROJECT_DIR.
      env: { CLAUDE_PROJECT_DIR: cwd, ...options.env },
      input: JSON.stringify(input),
      reject: false,
      maxBuffer: MAX_OUTPUT_CHARS,
    });

    let stoppedBy: "timeout" | "abort" | undefined;
    const pid = subprocess.pid;
    const stop = (why: "timeout" | "abort") => {
      if (stoppedBy !== undefined) return;
      stoppedBy = why;
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => stop("timeout"), timeoutMs);
    const onAbort = () => stop("abort");
    signal.addEventListener("abort", onAbort, { once: true });
    // Background children may hold stdout open; ending them as soon as the
    // command exits also lets its output end.
    if (pid !== undefined) subprocess.once("exit", () => signalGroup(pid, "SIGKILL", true));
    let result: Awaited<typeof subprocess>;
    try {
      result = await subprocess;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }

    if (stoppedBy === "abort") throw new AbortError(what, signal.reason);
    if (stoppedBy === "timeout") throw new HookTimeoutError(what, timeoutMs!);
    if (result.isMaxBuffer) throw new HookOutputError(command, `it wrote more than ${MAX_OUTPUT_CHARS} characters`, result.stdout);
    if (result.exitCode === 0) return parseCommandOutput(command, event, result.stdout);
    if (result.exitCode === 2) {
      return denyResult(event, result.stderr.trim() || `${what} blocked this (exit code 2) without giving a reason on stderr`);
    }
    throw new HookCommandError({ command, cwd, exitCode: result.exitCode, signal: result.signal, stderr: result.stderr }, result.cause);
  };
}
