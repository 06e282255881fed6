// The refusals of the MCP tools, each saying what to do next (a model reads them).
import { CadreError } from "../errors.ts";

/**
 * Refusals of the MCP tools. Their messages are read by a model, so each says
 * what to do next; tools return them as `isError` results, never as protocol errors.
 */

export class UnknownSessionError extends CadreError {
  constructor(id: string, known: string[]) {
    const list = known.length > 0 ? `Known sessions: ${known.join(", ")}.` : "There are no sessions; start one with spawn_session.";
    super("UNKNOWN_SESSION", `No session "${id}". ${list}`);
  }
}

export class SessionLimitError extends CadreError {
  constructor(limit: number) {
    super(
      "SESSION_LIMIT",
      `Already ${limit} live sessions, the most this server allows. Close one you no longer need with close_session, then spawn again.`,
    );
  }
}

export class SessionBusyError extends CadreError {
  constructor(id: string, status: string) {
    super(
      "SESSION_BUSY",
      `Session ${id} is ${status === "awaiting_permission" ? "waiting for a permission answer (see get_session, answer_permission)" : "still running its turn"}. ` +
        `Use wait_sessions to wait for it, or interrupt_session to stop the turn, then send the follow-up.`,
    );
  }
}

export class SessionClosedError extends CadreError {
  constructor(id: string) {
    super("SESSION_CLOSED", `Session ${id} is closed; start a new one with spawn_session.`);
  }
}

export class NameInUseError extends CadreError {
  constructor(name: string, id: string) {
    super("NAME_IN_USE", `The name "${name}" belongs to live session ${id}; choose another name, or send to it with query_session.`);
  }
}

export class UnknownPermissionRequestError extends CadreError {
  constructor(sessionId: string, requestId: string, waiting: string[]) {
    const list =
      waiting.length > 0
        ? `Waiting requests: ${waiting.join(", ")}.`
        : "No request of this session is waiting (it may have been answered, withdrawn or timed out).";
    super("UNKNOWN_PERMISSION_REQUEST", `Session ${sessionId} has no waiting request "${requestId}". ${list}`);
  }
}

export class InvalidArgumentError extends CadreError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
  }
}

export class McpServeError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("MCP_SERVE", message, options);
  }
}
