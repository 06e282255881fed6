// The errors of hooks: a command that failed, timed out or answered badly, and a policy that could not be read.
import { CadreError } from "../../errors.ts";

/** The tail of a hook command's stderr kept in errors, so one noisy hook cannot flood a log. */
const STDERR_TAIL_CHARS = 2_000;

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > STDERR_TAIL_CHARS ? `…${trimmed.slice(-STDERR_TAIL_CHARS)}` : trimmed;
}

/**
 * A hook command failed without blocking: it exited with a code other than 0
 * or 2, was killed by a signal it did not get from cadre, or could not start.
 * Claude Code calls this a non-blocking error; `withFallback` decides what it means.
 */
export class HookCommandError extends CadreError {
  readonly command: string;
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly stderr: string;

  constructor(details: { command: string; cwd: string; exitCode?: number; signal?: string; stderr: string }, cause?: unknown) {
    const how =
      details.signal !== undefined
        ? `was killed by ${details.signal}`
        : details.exitCode !== undefined
          ? `exited with code ${details.exitCode}`
          : // A missing cwd shows up as the shell being missing (ENOENT), so name both.
            `could not be started in ${details.cwd} (${cause instanceof Error ? cause.message : String(cause)})`;
    const stderr = tail(details.stderr);
    super(
      "HOOK_COMMAND_FAILED",
      `hook command \`${details.command}\` ${how}` +
        (stderr ? `; its stderr: ${stderr}` : "; it wrote nothing to stderr") +
        " (a non-blocking error in Claude Code's hook contract: only exit code 2 blocks)",
      { cause },
    );
    this.command = details.command;
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderr = details.stderr;
  }
}

/** A hook (a command, or any callback under `withFallback`) did not answer in time and was stopped. */
export class HookTimeoutError extends CadreError {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super("HOOK_TIMEOUT", `${what} did not finish within ${timeoutMs} ms and was stopped; raise its timeout or make it faster`);
  }
}

/** A hook command exited 0 but its stdout is not hook output Claude Code accepts. */
export class HookOutputError extends CadreError {
  constructor(
    readonly command: string,
    problem: string,
    readonly stdout: string,
    cause?: unknown,
  ) {
    super("HOOK_OUTPUT_INVALID", `hook command \`${command}\` exited 0 but ${problem}; stdout began: ${stdout.slice(0, 200)}`, {
      cause,
    });
  }
}

/** A policy names a pattern that is not a valid regular expression. */
export class HookPolicyError extends CadreError {
  constructor(
    readonly rule: string,
    readonly pattern: string,
    cause: unknown,
  ) {
    super(
      "HOOK_POLICY_INVALID",
      `policy ${rule} pattern ${JSON.stringify(pattern)} is not a valid regular expression (JavaScript syntax): ${(cause as Error).message}`,
      { cause },
    );
  }
}
