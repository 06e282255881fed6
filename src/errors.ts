/**
 * The base of every error cadre throws: a stable `code` a program can switch
 * on, a message a person can act on, and the underlying `cause`.
 */
export class CadreError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An operation was aborted through its AbortSignal. */
export class AbortError extends CadreError {
  constructor(operation: string, cause?: unknown) {
    super("ABORTED", `${operation} was aborted`, { cause });
  }
}
