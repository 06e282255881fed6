// A Session as the MCP tools see it: one turn at a time, the turn's outcome kept, a change signal for waiters.
import type { PendingPermission, Session, SessionStatus } from "../orchestrator/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { NoTurnRunningError, type TurnResult } from "../worker/index.ts";
import { type Answer, decisionFor } from "./answer.ts";
import { SessionBusyError, SessionClosedError, UnknownPermissionRequestError } from "./errors.ts";

/**
 * A Session as the MCP tools see it: one turn at a time (a follow-up while a
 * turn runs is refused, not queued), the outcome of the turn kept, and a change
 * signal for anyone waiting on it.
 */
export class ManagedSession {
  /** When a prompt was last sent; idle time counts from here or the last message. */
  #sentAt = Date.now();
  #inFlight = false;
  #turnError: { code: string; message: string } | undefined;
  #lastTurn: TurnResult | undefined;
  readonly #changes = new EventHub<void>();
  readonly #askingUser = new Set<string>();
  #closedReason: string | undefined;

  constructor(
    readonly session: Session,
    readonly owner: string,
  ) {}

  /** Why the server closed it, when it was not close_session ("idle", "disconnected", …). */
  get closedReason(): string | undefined {
    return this.#closedReason;
  }

  get id(): string {
    return this.session.info.id;
  }

  get name(): string {
    return this.session.info.name;
  }

  get agent(): string | undefined {
    return this.session.info.agent;
  }

  /** True while a turn is queued or running (also while it waits for a permission answer). */
  get busy(): boolean {
    return this.#inFlight;
  }

  get status(): SessionStatus {
    const status = this.session.status;
    if (status === "closed") return "closed";
    // A worker that never started leaves the session "starting"; the turn's failure says what happened.
    if (!this.#inFlight && this.#turnError && status === "starting") return "failed";
    // The next turn waits for a free slot.
    if (this.#inFlight && status === "idle") return "running";
    return status;
  }

  /** No turn is running, or the turn waits for a permission answer from the parent (not one the user is being asked). */
  get settled(): boolean {
    return !this.#inFlight || this.pending.some((p) => !this.#askingUser.has(p.requestId));
  }

  /** True while the client's user is being asked about this request (MCP elicitation). */
  isAskingUser(requestId: string): boolean {
    return this.#askingUser.has(requestId);
  }

  /**
   * Marks a request as put to the client's user, so the parent's waits go on
   * while the user decides. Returns the function that hands it back to the parent.
   */
  askUser(requestId: string): () => void {
    this.#askingUser.add(requestId);
    return () => {
      this.#askingUser.delete(requestId);
      this.changed();
    };
  }

  /** The last finished turn, when no turn runs now. */
  get result(): TurnResult | undefined {
    return this.#inFlight ? undefined : this.#lastTurn;
  }

  get error(): { code: string; message: string } | undefined {
    return this.#inFlight ? undefined : this.#turnError;
  }

  get pending(): PendingPermission[] {
    return this.session.pendingPermissions();
  }

  get lastActivityAt(): number {
    return Math.max(this.#sentAt, this.session.lastActivityAt);
  }

  /** Starts a turn; its outcome is kept for get_session. */
  send(prompt: string): void {
    if (this.session.status === "closed") throw new SessionClosedError(this.id);
    if (this.#inFlight) throw new SessionBusyError(this.id, this.status);
    this.#inFlight = true;
    this.#turnError = undefined;
    this.#sentAt = Date.now();
    // A parent model wrote the prompt: it is text, never a file read or a slash command.
    this.session
      .send(prompt, { verbatim: true })
      .then(
        (turn) => {
          this.#lastTurn = turn;
          if (turn.isError) this.#turnError = { code: "TURN_ERROR", message: turn.errors.join("; ") || turn.text || turn.subtype };
        },
        (error: unknown) => {
          this.#turnError = {
            code: (error as { code?: string }).code ?? "ERROR",
            message: error instanceof Error ? error.message : String(error),
          };
        },
      )
      .finally(() => {
        this.#inFlight = false;
        this.changed();
      });
    this.changed();
  }

  /**
   * A message while a turn runs: written into that turn (taken at its next step), whose result is then the
   * answer after it. Throws NoTurnRunningError when the turn has not started yet or is ending.
   */
  steer(text: string): void {
    if (this.session.status === "closed") throw new SessionClosedError(this.id);
    if (!this.#inFlight) throw new NoTurnRunningError();
    this.session.steer(text);
    this.#sentAt = Date.now();
    this.changed();
  }

  /** Answers one of the waiting permission requests. */
  answer(requestId: string, answer: Answer): void {
    const pending = this.pending;
    const request = pending.find((p) => p.requestId === requestId);
    if (!request)
      throw new UnknownPermissionRequestError(
        this.id,
        requestId,
        pending.map((p) => p.requestId),
      );
    this.session.answerPermission(requestId, decisionFor(request, answer));
    this.changed();
  }

  async interrupt(): Promise<void> {
    if (this.#inFlight) await this.session.interrupt();
  }

  async close(reason?: string): Promise<void> {
    if (this.session.status !== "closed" && reason) this.#closedReason = reason;
    await this.session.close();
    this.changed();
  }

  /** Subscribes to changes of status, turn and permission requests. Returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    return this.#changes.on(listener);
  }

  /** Tells the listeners; also called by whoever changed the session from outside (an answered permission). */
  changed(): void {
    this.#changes.emit();
  }
}
