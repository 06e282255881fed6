// The orchestrator's errors, each with its stable code.
import { CadreError } from "../errors.ts";
import { NOT_LOGGED_IN, NOT_LOGGED_IN_ADVICE } from "../worker/index.ts";
import type { BudgetScope } from "./types.ts";

/** A task named an agent the orchestrator does not know. */
export class UnknownAgentError extends CadreError {
  constructor(
    readonly agent: string,
    known: string[],
  ) {
    super("UNKNOWN_AGENT", `unknown agent "${agent}"; known agents: ${known.join(", ") || "none"}`);
  }
}

/** A task's time limit or idle limit ran out. */
export class TaskTimeoutError extends CadreError {
  constructor(
    readonly kind: "total" | "idle",
    readonly limitMs: number,
  ) {
    super(
      "TASK_TIMEOUT",
      kind === "total"
        ? `the task did not finish within its time limit of ${limitMs / 1000} s; raise timeout_s or split the task`
        : `the task sent no message for ${limitMs / 1000} s (idle limit); the worker was stopped`,
    );
  }
}

/** Dollars with cents, and more digits where cents would round a small amount away. */
function usd(amount: number): string {
  return amount >= 1 ? amount.toFixed(2) : amount.toPrecision(2);
}

/** A limit someone wrote, as written where cents would change it ($0.125 stays $0.125). */
function usdLimit(amount: number): string {
  const short = usd(amount);
  return Number(short) === amount ? short : String(amount);
}

/** "run", "agent reviewer", "task fix": how a budget is named to people. */
export function budgetLabel(scope: BudgetScope): string {
  return scope.kind === "run" ? "run" : `${scope.kind} ${scope.name}`;
}

/**
 * A budget is spent (or, `forecastUsd` given, what is left of it is less than
 * its agent's tasks cost): what it covers stops, and none of it starts. The
 * message opens with the budget that did it: `budget_exceeded: agent reviewer, $2.00`.
 */
export class BudgetExceededError extends CadreError {
  /** Which budget, as people read it: "agent reviewer, $2.00". */
  readonly budget: string;

  constructor(
    readonly spentUsd: number,
    readonly budgetUsd: number,
    readonly scope: BudgetScope = { kind: "run" },
    readonly forecastUsd?: number,
  ) {
    const budget = `${budgetLabel(scope)}, $${usdLimit(budgetUsd)}`;
    const which = `budget_exceeded: ${budget}`;
    super(
      "BUDGET_EXCEEDED",
      forecastUsd === undefined
        ? `${which}: the budget of $${usdLimit(budgetUsd)} is spent ($${usd(spentUsd)} used); no new task starts. Raise budget_usd to go on`
        : `${which}: $${usd(Math.max(0, budgetUsd - spentUsd))} is left and its agent's tasks cost $${usd(forecastUsd)} (median), so it was not started. Raise budget_usd, or set budget_forecast: false to start it anyway`,
    );
    this.budget = budget;
  }
}

/** A turn ended with an error result (API error, max turns, not logged in, …). */
export class TaskFailedError extends CadreError {
  constructor(
    readonly subtype: string,
    readonly errors: string[],
    readonly apiErrorStatus: number | undefined,
  ) {
    const detail = errors.length > 0 ? errors.join("; ") : "no details";
    // After an API error the CLI reports subtype "success" with is_error: naming that subtype would only confuse.
    const what = subtype === "success" ? "the turn failed" : `the turn ended with "${subtype}"`;
    const status = apiErrorStatus ? ` (API status ${apiErrorStatus})` : "";
    const hint = /not logged in|invalid api key|authentication/i.test(detail)
      ? ". Log in by running claude and /login, or set ANTHROPIC_API_KEY (cadre run --rehearse needs neither)"
      : "";
    super("TASK_FAILED", `${what}${status}: ${detail}${hint}`);
  }
}

/** A user stopped the task while it ran (Orchestrator.stopTask, `cadre stop`): it ends cancelled, its session kept. */
export class TaskStoppedError extends CadreError {
  constructor(by: string) {
    super("STOPPED", `stopped by ${by}`);
  }
}

/** A message, stop or interrupt named a task that is not running now (never ran, waits for a slot, or has ended). */
export class TaskNotRunningError extends CadreError {
  constructor(
    readonly task: string,
    running: readonly string[],
    /** Said instead of the list when the task has a process but no turn to take a message. */
    readonly why?: string,
  ) {
    const now = running.length === 0 ? "no task is running" : `running: ${running.join(", ")}`;
    super("TASK_NOT_RUNNING", why === undefined ? `task "${task}" is not running (${now})` : `task "${task}" ${why}`);
  }
}

/** The task's turn was interrupted from outside cadre (an interrupt request, or SIGINT to its claude process). */
export class TaskInterruptedError extends CadreError {
  constructor() {
    super("INTERRUPTED", "interrupted");
  }
}

/**
 * A task with an output schema (WorkerOptions.jsonSchema) ended without an
 * answer in that shape: the model never called the StructuredOutput tool
 * (STRUCTURED_OUTPUT_MISSING), or every answer it gave failed the schema until
 * the CLI gave up (STRUCTURED_OUTPUT_INVALID).
 */
export class StructuredOutputError extends CadreError {
  constructor(kind: "missing" | "invalid", detail: string) {
    super(
      kind === "missing" ? "STRUCTURED_OUTPUT_MISSING" : "STRUCTURED_OUTPUT_INVALID",
      kind === "missing"
        ? `the model ended without answering in the output schema (it never called the StructuredOutput tool)${detail ? `; its last text: ${detail}` : ""}`
        : `the model's answers never matched the output schema: ${detail}`,
    );
  }
}

/** The orchestrator was closed; the task did not (or will not) finish. */
export class OrchestratorClosedError extends CadreError {
  constructor() {
    super("ORCHESTRATOR_CLOSED", "the orchestrator was closed before the task finished");
  }
}

/** Bad input to the library API (a task without a prompt, a negative limit, …). */
export class InvalidTaskError extends CadreError {
  constructor(message: string) {
    super("INVALID_TASK", message);
  }
}

/** A session whose process ended cannot go on: it kept no session file to resume from. */
export class SessionNotResumableError extends CadreError {
  constructor(name: string) {
    super(
      "SESSION_NOT_RESUMABLE",
      `session "${name}" lost its claude process and cannot be resumed: it runs without session persistence (persistSession: false), so the CLI kept no session file. Open a new session, or leave session persistence on`,
    );
  }
}

/** The CLI has no login and no ANTHROPIC_API_KEY: no task can run, so none more starts. */
export class NotLoggedInError extends CadreError {
  constructor() {
    super(NOT_LOGGED_IN, NOT_LOGGED_IN_ADVICE);
  }
}

/** The first worker could not reach the API through all the CLI's retries: the others are not started to find the same. */
export class ApiUnreachableError extends CadreError {
  constructor(detail: string) {
    super(
      "API_UNREACHABLE",
      `the API cannot be reached (${detail}): check the network, a proxy (HTTPS_PROXY) or ANTHROPIC_BASE_URL; ` +
        "`cadre doctor` checks them, and `cadre run --rehearse` runs offline",
    );
  }
}

/** Why a post or a wait is refused: a limit of the run (which one), or what the post named. */
export type TaskPostRefusal = "MAX_POSTED_TASKS" | "MAX_POST_DEPTH" | "POST_INVALID" | "POST_TOO_LARGE" | "POST_CLOSED";

/** A post the run refuses: the tool answers the model with this message, as a tool error. */
export class TaskPostRefusedError extends CadreError {
  constructor(code: TaskPostRefusal, message: string) {
    super(code, message);
  }
}
