// The worker's errors: claude not found, a missing directory, bad options, an exit with its code and stderr tail.
import type { z } from "zod";
import { CadreError } from "../errors.ts";
import type { ResultMessage } from "../protocol/index.ts";
import { peerSpec } from "../util/peer.ts";
import type { TurnResult } from "./turn.ts";

/** The claude executable could not be found anywhere cadre looks. */
export class ClaudeNotFoundError extends CadreError {
  readonly searched: string[];
  constructor(searched: string[]) {
    super(
      "CLAUDE_NOT_FOUND",
      // The fix first: a run's table shows only the start of a task's error.
      `cannot find the claude CLI: install it beside cadre (npm install ${peerSpec("@anthropic-ai/claude-code")}), ` +
        `put claude on PATH, or set CADRE_CLAUDE_BIN (or the claudePath option) to a claude executable; looked at: ${searched.join(", ")}`,
    );
    this.searched = searched;
  }
}

/** The working directory given to a worker does not exist or is not a directory. */
export class WorkingDirectoryError extends CadreError {
  constructor(
    readonly cwd: string,
    cause?: unknown,
  ) {
    super("CWD_NOT_FOUND", `working directory "${cwd}" does not exist or is not a directory; create it or pass another cwd`, { cause });
  }
}

export interface ExitDetails {
  exitCode: number | null;
  signal: string | null;
  /** The last lines the process wrote to stderr (bounded). */
  stderrTail: string;
}

/** The claude process ended while cadre still expected it to work. */
/** Worker options that contradict each other; nothing was started. */
export class WorkerOptionsError extends CadreError {
  constructor(problem: string) {
    super("INVALID_WORKER_OPTIONS", `invalid worker options: ${problem}`);
  }
}

/** The CLI cannot restore files to the given message (checkpointing off, or no checkpoint there). */
export class RewindFilesError extends CadreError {
  constructor(
    /** Where the rewind was to go: "message <id>", "turn <n>". */
    readonly target: string,
    reason: string,
    cause?: unknown,
  ) {
    super("REWIND_FAILED", `cannot rewind files to ${target}: ${reason}`, { cause });
  }
}

export class WorkerExitedError extends CadreError implements ExitDetails {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderrTail: string;

  constructor(details: ExitDetails, during: string, cause?: unknown) {
    const how = details.signal ? `was killed by ${details.signal}` : `exited with code ${details.exitCode}`;
    const tail = details.stderrTail.trim();
    super("WORKER_EXITED", `claude ${how} ${during}${tail ? `; its stderr ended with:\n${tail}` : "; it wrote nothing to stderr"}`, { cause });
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderrTail = details.stderrTail;
  }
}

/** What to do about a startup failure the CLI names, for the reasons a person can fix. */
const STARTUP_FIXES: Record<string, string> = {
  bypass_root: "bypassPermissions is refused to root: run cadre as another user, or choose another permission mode",
  temp_dir_unusable: "point TMPDIR at a writable directory",
  cwd_unavailable: "give the worker a working directory that exists and can be read",
  shell_tool_missing: "install a shell (bash or sh) on PATH",
  config_file_invalid: "repair or remove the Claude Code config file named above",
  managed_settings_invalid: "ask the administrator to repair the managed settings",
  cli_version_too_old: "update the claude CLI",
  sandbox_required_unavailable: "install what the sandbox needs (bubblewrap, socat) or turn the sandbox requirement off",
};

/**
 * The CLI reported a known startup failure (`startup_failure_reason` on its
 * result) and exited: the same start would fail again, so it is not retried.
 */
export class StartupFailedError extends CadreError implements ExitDetails {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderrTail: string;

  constructor(
    readonly reason: string,
    readonly errors: readonly string[],
    details: ExitDetails,
  ) {
    const fix = STARTUP_FIXES[reason] ?? "fix the cause above; starting again as it is will fail the same way";
    super("STARTUP_FAILED", `claude could not start (${reason}): ${errors.join("; ") || "no detail"}; ${fix}`);
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderrTail = details.stderrTail;
  }
}

/** The code of SessionNotFoundError, also in a task result's error. */
export const SESSION_NOT_FOUND = "SESSION_NOT_FOUND";

/**
 * The CLI has no conversation of the session a worker was to resume: it ran
 * on another machine or under another HOME, or its files were removed.
 */
export class SessionNotFoundError extends CadreError {
  constructor(
    readonly sessionId: string,
    cause: WorkerExitedError,
  ) {
    super(
      SESSION_NOT_FOUND,
      `cannot resume session ${sessionId}: the CLI has no such conversation here (it ran on another machine or under another HOME, or its files were removed); start without resume`,
      { cause },
    );
  }
}

/** The worker was closed (by its owner) while this operation was pending. */
export class WorkerClosedError extends CadreError {
  constructor(operation: string) {
    super("WORKER_CLOSED", `${operation} cannot complete: the worker was closed`);
  }
}

/** A message meant for a running turn found none: the session is idle, or its turn is ending. */
export class NoTurnRunningError extends CadreError {
  constructor() {
    super("NO_TURN_RUNNING", "the worker has no turn running to take the message (it is idle, or its turn is ending)");
  }
}

/** A control request to the CLI got no answer in time. */
export class ControlTimeoutError extends CadreError {
  constructor(
    readonly subtype: string,
    readonly timeoutMs: number,
  ) {
    super("CONTROL_TIMEOUT", `the claude CLI did not answer the "${subtype}" control request within ${timeoutMs} ms`);
  }
}

/** The CLI answered a control request with an error. */
export class ControlRequestError extends CadreError {
  constructor(
    readonly subtype: string,
    readonly cliMessage: string,
  ) {
    super("CONTROL_ERROR", `the claude CLI refused the "${subtype}" control request: ${cliMessage}`);
  }
}

/** Who produces the answer to each kind of CLI request, for messages that point at the code to fix. */
const ANSWERED_BY: Record<string, string> = {
  can_use_tool: "the permission handler (canUseTool)",
  hook_callback: "a hook callback",
  mcp_message: "an in-process MCP server",
};

/** cadre's answer to a CLI control request does not match the protocol; the CLI got an error answer instead. */
export class InvalidControlAnswerError extends CadreError {
  constructor(
    readonly subtype: string,
    cause: z.ZodError,
  ) {
    const issues = cause.issues.map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    super(
      "INVALID_CONTROL_ANSWER",
      `${ANSWERED_BY[subtype] ?? "a handler"} answered the claude CLI's "${subtype}" request with something the protocol does not allow ` +
        `(${issues.join("; ")}); the CLI was sent an error instead`,
      { cause },
    );
  }
}

/** The CLI broke the protocol in a way cadre cannot continue from. */
export class ProtocolError extends CadreError {
  constructor(message: string, cause?: unknown) {
    super("PROTOCOL_ERROR", message, { cause });
  }
}

/** "/clear" did not give the worker a clean new session as the pinned CLI does. */
export class ResetFailedError extends CadreError {
  constructor(reason: string, cause?: unknown) {
    super("RESET_FAILED", `the worker's conversation could not be reset: ${reason}`, { cause });
  }
}

/** The code of a turn the CLI refused for want of a login or an API key. */
export const NOT_LOGGED_IN = "NOT_LOGGED_IN";

/** What to do about a missing login, for every error that reports one. */
export const NOT_LOGGED_IN_ADVICE =
  "claude is not logged in and ANTHROPIC_API_KEY is not set: log in with `claude auth login` (or run claude and type /login), " +
  "or set ANTHROPIC_API_KEY; `cadre run --rehearse` runs offline and needs neither";

/** Whether a turn's end says the CLI has no login: its text is "Not logged in · Please run /login", with is_error. */
export function saysNotLoggedIn(result: Pick<ResultMessage, "is_error" | "result" | "errors">): boolean {
  return result.is_error === true && /not logged in/i.test([result.result, ...(result.errors ?? [])].join(" "));
}

/** The stable code of each way a turn ends in error, by the result's subtype. */
const TURN_ERROR_CODES: Record<string, string> = {
  error_max_turns: "MAX_TURNS",
  error_max_budget_usd: "MAX_BUDGET",
  error_max_structured_output_retries: "STRUCTURED_OUTPUT_INVALID",
};

/**
 * A turn that ended in error: `Worker.run()` rejects with it, as execa rejects
 * a command that failed (`run(prompt, { reject: false })` resolves with the
 * result instead; `send()` streams the turn either way). `result` is the
 * whole turn. The code: NOT_LOGGED_IN, INTERRUPTED, API_ERROR (the API
 * answered with an error status, in `apiErrorStatus`), MAX_TURNS, MAX_BUDGET,
 * STRUCTURED_OUTPUT_INVALID, or TURN_FAILED for any other error.
 */
export class TurnFailedError extends CadreError {
  readonly apiErrorStatus: number | undefined;
  /** The turn's result; not enumerable, so that an uncaught error prints its message, not every message of the turn. */
  declare readonly result: TurnResult;

  constructor(result: TurnResult) {
    const status = result.result.api_error_status ?? undefined;
    const said = result.errors.length > 0 ? result.errors.join("; ") : result.text || result.subtype;
    const code = saysNotLoggedIn(result.result)
      ? NOT_LOGGED_IN
      : result.interrupted
        ? "INTERRUPTED"
        : (TURN_ERROR_CODES[result.subtype] ?? (status !== undefined ? "API_ERROR" : "TURN_FAILED"));
    super(
      code,
      code === NOT_LOGGED_IN
        ? `${NOT_LOGGED_IN_ADVICE} (the CLI said "${said}")`
        : `the turn ended in error${status !== undefined ? ` (API status ${status})` : ""}: ${said}`,
    );
    this.apiErrorStatus = status;
    Object.defineProperty(this, "result", { value: result, enumerable: false });
  }
}
