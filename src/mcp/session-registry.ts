// The child sessions of every client: their limits, idle closing, permission requests and activity.
import type { Orchestrator, PendingPermission, SessionSpec, SessionStatus } from "../orchestrator/index.ts";
import { DEFAULT_PERMISSION_TIMEOUT_MS } from "../orchestrator/index.ts";
import type { ElicitationAnswer, ElicitationRequest } from "../protocol/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { NameInUseError, SessionLimitError, UnknownSessionError } from "./errors.ts";
import { ManagedSession } from "./managed-session.ts";

export interface SessionRegistryOptions {
  /** Live (not closed) sessions at once, over all clients. Default 16. */
  maxSessions?: number;
  /** A session with no turn and no message for this long is closed. Default 15 minutes; 0 turns it off. */
  idleTimeoutMs?: number;
  /** An unanswered permission request is denied after this long. Default 5 minutes. */
  permissionTimeoutMs?: number;
  /** Closed sessions kept for get_session and get_transcript. Default 100. */
  keepClosed?: number;
}

export type PermissionListener = (session: ManagedSession, pending: PendingPermission) => void;

/** Asks a client's user what an MCP server of one of its children asks (MCP elicitation). */
export type ElicitationRoute = (session: ManagedSession, request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationAnswer>;

/** Something a child did that its parent may want to hear of: its status changed (from `before`), or it asks a permission. */
export type ChildActivity = { session: ManagedSession } & (
  | { kind: "status"; before: SessionStatus }
  | { kind: "permission"; pending: PendingPermission }
);

const DEFAULT_MAX_SESSIONS = 16;
const DEFAULT_SESSION_IDLE_MS = 15 * 60_000;
const DEFAULT_KEEP_CLOSED = 100;

/**
 * The child sessions of every MCP client: the limit on live sessions, idle
 * reaping, and per-client ownership (a client sees and steers only its own
 * children, and they are closed when it goes).
 */
export class SessionRegistry {
  readonly #orchestrator: Orchestrator;
  readonly #keepClosed: number;
  readonly #sessions = new Map<string, ManagedSession>();
  readonly #permissionRequests = new EventHub<{ session: ManagedSession; pending: PendingPermission }>();
  readonly #activity = new EventHub<ChildActivity>();
  /** Owner → how its children's elicitations reach its user. */
  readonly #elicitationRoutes = new Map<string, ElicitationRoute>();
  /** Owner → the unsubscribe function of its one permission route. */
  readonly #permissionRoutes = new Map<string, () => void>();
  readonly #reaper: ReturnType<typeof setInterval> | undefined;
  readonly #offEvents: () => void;
  readonly maxSessions: number;
  readonly idleTimeoutMs: number;
  readonly permissionTimeoutMs: number;

  constructor(orchestrator: Orchestrator, options: SessionRegistryOptions = {}) {
    this.#orchestrator = orchestrator;
    this.#keepClosed = options.keepClosed ?? DEFAULT_KEEP_CLOSED;
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_SESSION_IDLE_MS;
    this.permissionTimeoutMs = options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
    this.#offEvents = orchestrator.on((event) => {
      if (event.type === "session_status") this.#sessions.get(event.task.id)?.changed();
    });
    if (this.idleTimeoutMs > 0) {
      this.#reaper = setInterval(() => void this.#reapIdle(), Math.min(30_000, Math.max(250, this.idleTimeoutMs / 4)));
      this.#reaper.unref();
    }
  }

  get liveCount(): number {
    return [...this.#sessions.values()].filter((s) => s.status !== "closed").length;
  }

  /**
   * What every child's worker gets on top of what spawn_session asks for:
   * file checkpoints, so that a parent can undo what a child wrote
   * (rewind_session_files). Spares are started with it too, or none would match.
   */
  static readonly CHILD_WORKER = { fileCheckpointing: true } as const;

  /**
   * Throws why no child can run (no login, an API that cannot be reached),
   * once the first child's worker has told: the same words for every client.
   */
  throwIfRefused(): void {
    const refusal = this.#orchestrator.accessRefusal;
    if (refusal !== undefined) throw refusal;
  }

  /** Opens a session for `owner`; it is "ask" for permissions so that its parent decides. */
  open(owner: string, spec: Omit<SessionSpec, "permissions" | "permissionTimeoutMs">): ManagedSession {
    this.throwIfRefused();
    if (this.liveCount >= this.maxSessions) throw new SessionLimitError(this.maxSessions);
    if (spec.name !== undefined) {
      const holder = this.list(owner).find((s) => s.name === spec.name && s.status !== "closed");
      if (holder) throw new NameInUseError(spec.name, holder.id);
    }
    const session = this.#orchestrator.openSession({
      ...spec,
      worker: { ...SessionRegistry.CHILD_WORKER, ...spec.worker },
      permissions: "ask",
      permissionTimeoutMs: this.permissionTimeoutMs,
    });
    const managed = new ManagedSession(session, owner);
    session.onPermissionRequest((pending) => {
      this.#permissionRequests.emit({ session: managed, pending });
      this.#activity.emit({ session: managed, kind: "permission", pending });
      managed.changed();
    });
    let status = managed.status;
    managed.onChange(() => {
      const before = status;
      status = managed.status;
      if (status !== before) this.#activity.emit({ session: managed, kind: "status", before });
    });
    this.#sessions.set(managed.id, managed);
    this.#forgetOldClosed();
    return managed;
  }

  /** A session of `owner` by id, or by name (a live one first). */
  find(owner: string, idOrName: string): ManagedSession {
    const byId = this.#sessions.get(idOrName);
    if (byId && byId.owner === owner) return byId;
    const named = this.list(owner).filter((s) => s.name === idOrName);
    const found = named.find((s) => s.status !== "closed") ?? named.at(-1);
    if (found) return found;
    throw new UnknownSessionError(
      idOrName,
      this.list(owner).map((s) => (s.name === s.id ? s.id : `${s.id} (${s.name})`)),
    );
  }

  /** A session of any owner, for the server's operator (the dashboard). */
  get(id: string): ManagedSession | undefined {
    return this.#sessions.get(id);
  }

  list(owner: string, statuses?: readonly SessionStatus[]): ManagedSession[] {
    return [...this.#sessions.values()].filter((s) => s.owner === owner && (!statuses || statuses.includes(s.status)));
  }

  /** Routes the owner's permission requests (e.g. to MCP elicitation), replacing its earlier route. Returns the unsubscribe function. */
  onPermissionRequest(owner: string, listener: PermissionListener): () => void {
    this.#dropPermissionRoute(owner);
    const off = this.#permissionRequests.on(({ session, pending }) => {
      if (session.owner === owner) listener(session, pending);
    });
    this.#permissionRoutes.set(owner, off);
    return () => {
      if (this.#permissionRoutes.get(owner) === off) this.#dropPermissionRoute(owner);
    };
  }

  /** Routes the owner's children's elicitations to its user; without a route they are declined. Returns the unsubscribe function. */
  onElicitation(owner: string, route: ElicitationRoute): () => void {
    this.#elicitationRoutes.set(owner, route);
    return () => {
      if (this.#elicitationRoutes.get(owner) === route) this.#elicitationRoutes.delete(owner);
    };
  }

  /**
   * An MCP server of a child asks its user: the child's owner's route asks,
   * else it is declined (the server hears "decline", never an error).
   */
  elicit(request: ElicitationRequest & { signal: AbortSignal; sessionId: string | undefined }): Promise<ElicitationAnswer> {
    const { signal, sessionId, ...asked } = request;
    const session = [...this.#sessions.values()].find((s) => sessionId !== undefined && s.session.sessionId === sessionId);
    const route = session && this.#elicitationRoutes.get(session.owner);
    return route && session ? route(session, asked, signal) : Promise.resolve({ action: "decline" });
  }

  /** Tells `listener` what the owner's children do (see ChildActivity). Returns the unsubscribe function. */
  onActivity(owner: string, listener: (activity: ChildActivity) => void): () => void {
    return this.#activity.on((activity) => {
      if (activity.session.owner === owner) listener(activity);
    });
  }

  /** Closes every session of a client that went away. */
  async closeOwner(owner: string, reason = "the client disconnected"): Promise<void> {
    this.#dropPermissionRoute(owner);
    this.#elicitationRoutes.delete(owner);
    await Promise.all(this.list(owner).map((s) => s.close(reason)));
  }

  async closeAll(reason = "the server stopped"): Promise<void> {
    if (this.#reaper) clearInterval(this.#reaper);
    this.#offEvents();
    for (const owner of [...this.#permissionRoutes.keys()]) this.#dropPermissionRoute(owner);
    await Promise.all([...this.#sessions.values()].map((s) => s.close(reason)));
  }

  async #reapIdle(): Promise<void> {
    const cutoff = Date.now() - this.idleTimeoutMs;
    const idle = [...this.#sessions.values()].filter((s) => s.status !== "closed" && !s.busy && s.pending.length === 0 && s.lastActivityAt < cutoff);
    await Promise.all(idle.map((s) => s.close(`idle for more than ${Math.round(this.idleTimeoutMs / 1000)} s`)));
  }

  #dropPermissionRoute(owner: string): void {
    this.#permissionRoutes.get(owner)?.();
    this.#permissionRoutes.delete(owner);
  }

  #forgetOldClosed(): void {
    const closed = [...this.#sessions.values()].filter((s) => s.status === "closed");
    const excess = closed.length - this.#keepClosed;
    for (const session of closed.slice(0, Math.max(0, excess))) this.#sessions.delete(session.id);
  }
}
