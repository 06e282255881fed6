import process from "node:process";
import { execa } from "execa";
import { AbortError } from "../../errors.ts";
import type { HookCallback } from "../../worker/hooks.ts";
import { HookCommandError, HookOutputError, HookTimeoutError } from "./errors.ts";
import { parseCommandOutput } from "./output.ts";
import { denyResult } from "./results.ts";

export interface CommandHookOptions {
  /** Where the command runs. Default: the session's cwd from the hook input, as Claude Code does. */
  cwd?: string;
  /** Variables set for the command on top of this process's environment. */
  env?: Record<string, string | undefined>;
  /** Default 60 000 ms, Claude Code's default for command hooks. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** A hook's answer is a line or a small JSON object; more than this is a runaway command. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

/** Process groups of commands still running, ended if cadre itself exits (execa's own cleanup skips detached children). */
const liveGroups = new Set<number>();
let exitListenerInstalled = false;

/** Ends the command and everything it started: it leads its own process group. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // No such group (already gone), or no process groups on this platform: end the leader alone.
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

function track(pid: number): void {
  if (!exitListenerInstalled) {
    exitListenerInstalled = true;
    process.on("exit", () => {
      for (const group of liveGroups) killGroup(group);
    });
  }
  liveGroups.add(pid);
}

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
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const what = `hook command \`${command}\``;
  return async (input, { signal }) => {
    if (signal.aborted) throw new AbortError(what, signal.reason);
    const event = input.hook_event_name;
    const cwd = options.cwd ?? input.cwd;
    const subprocess = execa(command, {
      shell: true,
      cwd,
      // Hooks written for Claude Code find their scripts through CLAUDE_PROJECT_DIR.
      env: { CLAUDE_PROJECT_DIR: cwd, ...options.env },
      input: JSON.stringify(input),
      detached: true,
      reject: false,
      maxBuffer: MAX_OUTPUT_CHARS,
    });

    let stoppedBy: "timeout" | "abort" | undefined;
    const pid = subprocess.pid;
    const stop = (why: "timeout" | "abort") => {
      if (stoppedBy !== undefined) return;
      stoppedBy = why;
      if (pid !== undefined) killGroup(pid);
    };
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    const onAbort = () => stop("abort");
    signal.addEventListener("abort", onAbort, { once: true });
    if (pid !== undefined) {
      track(pid);
      // Background children may hold stdout open; ending them as soon as the
      // command exits also lets its output end.
      subprocess.once("exit", () => killGroup(pid));
    }
    let result: Awaited<typeof subprocess>;
    try {
      result = await subprocess;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (pid !== undefined) liveGroups.delete(pid);
    }

    if (stoppedBy === "abort") throw new AbortError(what, signal.reason);
    if (stoppedBy === "timeout") throw new HookTimeoutError(what, timeoutMs);
    if (result.isMaxBuffer) throw new HookOutputError(command, `it wrote more than ${MAX_OUTPUT_CHARS} characters`, result.stdout);
    if (result.exitCode === 0) return parseCommandOutput(command, event, result.stdout);
    if (result.exitCode === 2) {
      return denyResult(event, result.stderr.trim() || `${what} blocked this (exit code 2) without giving a reason on stderr`);
    }
    throw new HookCommandError({ command, cwd, exitCode: result.exitCode, signal: result.signal, stderr: result.stderr }, result.cause);
  };
}
