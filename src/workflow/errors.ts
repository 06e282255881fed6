/** The workflow layer's errors: a script refused before launch, a limit the running script hit. */
import { CadreError } from "../errors.ts";

/** A script refused before any agent starts (syntax, an import, the clock, `meta`); the message is one line. */
export class WorkflowScriptError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("WORKFLOW_SCRIPT_INVALID", message, options);
  }
}

/** Why a running script was stopped by cadre rather than by its own code. */
export type WorkflowLimit = "cpu_time" | "memory" | "output" | "agents" | "never_settles" | "output_tokens";

/** The script ran past a limit of its sandbox or of the run (CPU time, memory, what it hands out, agents per run). */
export class WorkflowLimitError extends CadreError {
  readonly limit: WorkflowLimit;

  constructor(limit: WorkflowLimit, message: string, options?: { cause?: unknown }) {
    super("WORKFLOW_LIMIT", message, options);
    this.limit = limit;
  }
}

/** The script threw (or rejected) on its own: its message, as the script's error. */
export class WorkflowScriptFailedError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("WORKFLOW_SCRIPT_FAILED", message, options);
  }
}
