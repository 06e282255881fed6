// A long-lived session: one claude process kept between turns, its permission requests optionally parked for the caller.
import type { CliMessage, ContextUsage, GetTaskOutputResponse, PermissionMode, RewindFilesResponse, UsageResponse } from "../protocol/index.ts";
import { EventHub } from "../util/event-hub.ts";
import {
  askUserQuestion,
  type BackgroundTask,
  NoTurnRunningError,
  type PermissionDecision,
  type PermissionHandler,
  type PermissionRequest,
  planReview,
  RewindFilesError,
  type TurnResult,
  type Worker,
  WorkerClosedError,
  type WorkerOptions,
} from "../worker/index.ts";
import { type Charge, type ReplyPricer, WorkerCost } from "./accounting.ts";
import type { SessionStatus, TaskInfo } from "./types.ts";

/** How a session's permission requests are decided. "ask": they wait for answerPermission(). */
export type SessionPermissions = "ask" | "deny" | "allow" | PermissionHandler;

export interface SessionSpec {
  /** Shown in events and listings; default: the session's id. */
  name?: string;
  /** An agent known to the orchestrator: its prompt, tools and model configure the session's worker. */
  agent?: string;
  /** Model alias or id, over the agent's. */
  model?: string;
  /** The worker's working directory. */
  cwd?: string;
  /** Appended to the system prompt (after the agent's). */
  appendSystemPrompt?: string;
  /** Tools that run without asking, e.g. `["Read", "Bash(git diff:*)"]`. */
  allowedTools?: string[];
  /** How tool use is approved (`--permission-mode`). */
  permissionMode?: WorkerOptions["permissionMode"];
  /** How the session's permission requests are decided; default "deny". */
  permissions?: SessionPermissions;
  /** With permissions "ask": an unanswered request is denied after this long. Default 5 minutes. */
  permissionTimeoutMs?: number;
  /** Any other worker option, over the orchestrator's and the agent's. */
  worker?: Partial<WorkerOptions>;
}

export interface PendingPermission {
  requestId: string;
  /** "question" (AskUserQuestion), "plan" (ExitPlanMode) or "tool". */
  kind: "tool" | "question" | "plan";
  toolName: string;
  input: Record<string, unknown>;
  /** Epoch milliseconds. */
  since: number;
}

/** What a session needs from its orchestrator. */
export interface SessionHost {
  /** Runs a job in a scheduler slot. */
  schedule<T>(job: (signal: AbortSignal) => Promise<T>, key: string | undefined, signal: AbortSignal | undefined): Promise<T>;
  /** A process for the session (a spare, when one fits); with `resume`, a new one that continues that session. */
  startWorker(session: Session, canUseTool: PermissionHandler | undefined, resume: string | undefined, signal: AbortSignal): Promise<Worker>;
  /** With a reply or a result, what it adds to the session's cost (and, a result, its tokens). */
  onMessage(session: Session, message: CliMessage, charge: Charge | undefined): void;
  onStatus(session: Session): void;
  /** Prices each reply as it arrives, so that the budgets over the session count it then. */
  prices?: ReplyPricer;
}

/** How long a session's permission request waits for an answer before it is denied. */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;
const MAX_KEPT_MESSAGES = 5_000;

/**
 * A long-lived conversation: one claude process kept between turns. Each
 * turn takes a scheduler slot while it runs; a worker that died is replaced
 * by one that resumes the same session id.
 */
export class Session {
  readonly createdAt = Date.now();
  #status: SessionStatus = "starting";
  #turns = 0;
  #costUsd = 0;
  #lastResult: TurnResult | undefined;
  #lastError: { code: string; message: string } | undefined;
  #lastActivityAt = Date.now();
  #worker: Worker | undefined;
  #cost = new WorkerCost();
  readonly #kept: CliMessage[] = [];
  #dropped = 0;
  readonly #pending = new Map<string, { entry: PendingPermission; resolve: (d: PermissionDecision) => void }>();
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** The id each finished turn's prompt was sent with, in order: where rewindFiles can go back to. */
  readonly #turnMessageIds: string[] = [];
  readonly #permissionRequests = new EventHub<PendingPermission>();
  /** The mode set_permission_mode put in effect on the live process; a new process starts with the spec's again. */
  #permissionModeSet: string | undefined;
  readonly #host: SessionHost;

  constructor(
    readonly info: TaskInfo,
    readonly spec: SessionSpec,
    host: SessionHost,
  ) {
    this.#host = host;
  }

  get status(): SessionStatus {
    return this.#status;
  }

  /** Turns that ended with a result. */
  get turns(): number {
    return this.#turns;
  }

  get costUsd(): number {
    return this.#costUsd;
  }

  get lastResult(): TurnResult | undefined {
    return this.#lastResult;
  }

  /** Why the last turn failed; undefined after a turn that succeeded. */
  get lastError(): { code: string; message: string } | undefined {
    return this.#lastError;
  }

  /** Epoch milliseconds of the last message from the worker. */
  get lastActivityAt(): number {
    return this.#lastActivityAt;
  }

  get sessionId(): string | undefined {
    return this.#lastResult?.sessionId ?? this.#worker?.sessionId;
  }

  get pid(): number | undefined {
    return this.#worker?.pid;
  }

  /** Messages so far; `offset` is the index of the first one kept (older ones are dropped past a bound). */
  transcript(): { offset: number; messages: readonly CliMessage[] } {
    return { offset: this.#dropped, messages: this.#kept };
  }

  pendingPermissions(): PendingPermission[] {
    return [...this.#pending.values()].map((p) => p.entry);
  }

  /**
   * Called whenever a request starts waiting for answerPermission() (permissions
   * "ask"), so a host can ask someone at once instead of polling. Returns the unsubscribe function.
   */
  onPermissionRequest(listener: (pending: PendingPermission) => void): () => void {
    return this.#permissionRequests.on(listener);
  }

  /** Answers a waiting permission request. False when no such request waits. */
  answerPermission(requestId: string, decision: PermissionDecision): boolean {
    const waiting = this.#pending.get(requestId);
    if (!waiting) return false;
    this.#pending.delete(requestId);
    waiting.resolve(decision);
    this.#setStatus(this.#pending.size > 0 ? "awaiting_permission" : "running");
    return true;
  }

  /** Runs a turn; turns run one after another. `verbatim`: see Worker.send (default: the worker's verbatimPrompts). */
  send(prompt: string, options: { signal?: AbortSignal; verbatim?: boolean } = {}): Promise<TurnResult> {
    if (this.#closed) return Promise.reject(new WorkerClosedError("the turn"));
    const turn = this.#tail.then(() =>
      this.#host.schedule(
        async (slotSignal) => {
          const signal = options.signal ? AbortSignal.any([slotSignal, options.signal]) : slotSignal;
          const worker = await this.#liveWorker(signal);
          this.#setStatus("running");
          try {
            const result = await worker.run(prompt, { signal, verbatim: options.verbatim, reject: false });
            this.#turns++;
            if (result.userMessageId !== undefined) this.#turnMessageIds.push(result.userMessageId);
            this.#lastResult = result;
            this.#lastError = result.isError ? { code: "TURN_ERROR", message: result.errors.join("; ") || result.subtype } : undefined;
            return result;
          } catch (error) {
            this.#lastError = { code: (error as { code?: string }).code ?? "ERROR", message: (error as Error).message };
            throw error;
          } finally {
            if (!this.#closed) this.#setStatus(worker.state === "failed" || worker.state === "exited" ? "failed" : "idle");
          }
        },
        this.spec.agent,
        options.signal,
      ),
    );
    this.#tail = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Writes a message into the running turn (Worker.steer): taken at its next step, and the turn's
   * result is the answer after it. Throws NoTurnRunningError when no turn of the session runs.
   */
  steer(text: string): void {
    if (this.#worker === undefined) throw new NoTurnRunningError();
    this.#worker.steer(text);
  }

  /** Interrupts the running turn and stops the background work that is part of it. */
  async interrupt(): Promise<void> {
    await this.#worker?.stopBackgroundTasks();
    await this.#worker?.interrupt();
  }

  /** The background tasks (workflows, agents, shells, monitors) of the session's process, running and ended. */
  get backgroundTasks(): BackgroundTask[] {
    return this.#worker?.backgroundTasks ?? [];
  }

  /** Stops one background task (`stop_task`); the turn that started it then ends. */
  async stopBackgroundTask(taskId: string): Promise<void> {
    await this.#processFor("stopping a background task").stopTask(taskId);
  }

  /** The end (at most 8 KiB) of a background shell's or Monitor's output. */
  async backgroundTaskOutput(taskId: string): Promise<GetTaskOutputResponse> {
    return this.#processFor("reading a background task's output").taskOutput(taskId);
  }

  /** Sends the running turn's foreground work (a Bash command, a subagent) to the background: one tool_use's, or all. */
  async backgroundForegroundWork(toolUseId?: string): Promise<void> {
    await this.#processFor("sending work to the background").backgroundForegroundTasks(toolUseId);
  }

  /** The permission mode in effect: the last one set on the live process, else the one it started with. */
  get permissionMode(): string | undefined {
    return this.#permissionModeSet ?? this.#worker?.session?.permissionMode ?? this.spec.permissionMode;
  }

  /** Changes the live process's permission mode (`set_permission_mode`); resolves with the mode the CLI says is in effect. */
  async setPermissionMode(mode: PermissionMode): Promise<string> {
    const answer = await this.#processFor("changing the permission mode").setPermissionMode(mode);
    this.#permissionModeSet = answer.mode ?? mode;
    return this.#permissionModeSet;
  }

  /** The account's plan and rate limits, as the session's process knows them (`get_usage`). */
  async usage(): Promise<UsageResponse> {
    return this.#processFor("reading the plan usage").usage();
  }

  /** How full the session's context window is, by category (`get_context_usage`). */
  async contextUsage(): Promise<ContextUsage> {
    return this.#processFor("reading the context usage").contextUsage();
  }

  /** Sets the session's title in the CLI's transcript (`rename_session`). */
  async rename(title: string): Promise<void> {
    await this.#processFor("renaming the session").renameSession(title);
  }

  #processFor(what: string): Worker {
    const worker = this.#worker;
    if (!worker || worker.state === "exited" || worker.state === "failed" || worker.state === "closing") throw new WorkerClosedError(what);
    return worker;
  }

  /**
   * Restores the files this session edited to how they were when turn `turn`
   * (1 = the first) began; with `dryRun`, only reports what would change.
   * Needs the worker option `fileCheckpointing` and the session's live process.
   */
  async rewindFiles(turn: number, options: { dryRun?: boolean } = {}): Promise<RewindFilesResponse> {
    const userMessageId = this.#turnMessageIds[turn - 1];
    if (userMessageId === undefined) {
      const why =
        this.#turns > 0 && this.#turnMessageIds.length === 0
          ? "file checkpointing is off; open the session with worker: { fileCheckpointing: true }"
          : `the session has ${this.#turnMessageIds.length} finished turn(s)`;
      throw new RewindFilesError(`turn ${turn}`, why);
    }
    const worker = this.#worker;
    if (!worker || worker.state === "exited" || worker.state === "failed" || worker.state === "closing") {
      throw new RewindFilesError(`turn ${turn}`, "the session's process has ended, and its checkpoints with it");
    }
    return worker.rewindFiles(userMessageId, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const [id, waiting] of this.#pending) {
      this.#pending.delete(id);
      waiting.resolve({ behavior: "deny", message: "the session was closed" });
    }
    await this.#worker?.close();
    this.#setStatus("closed");
  }

  async #liveWorker(signal: AbortSignal): Promise<Worker> {
    const alive = this.#worker && this.#worker.state !== "exited" && this.#worker.state !== "failed" && this.#worker.state !== "closing";
    if (alive) return this.#worker!;
    const worker = await this.#host.startWorker(this, this.#permissionHandler(), this.sessionId, signal);
    this.#worker = worker;
    this.#permissionModeSet = undefined;
    this.#cost = new WorkerCost(this.#host.prices);
    worker.on((event) => {
      if (event.type !== "message") return;
      this.#lastActivityAt = Date.now();
      this.#keep(event.message);
      const charge = this.#cost.observe(event.message);
      this.#costUsd += charge?.usd ?? 0;
      this.#host.onMessage(this, event.message, charge);
    });
    return worker;
  }

  #permissionHandler(): PermissionHandler | undefined {
    const mode = this.spec.permissions;
    if (mode === undefined || mode === "deny") return undefined;
    if (mode === "allow") return () => ({ behavior: "allow" });
    if (typeof mode === "function") return mode;
    return (request) => this.#waitForAnswer(request);
  }

  #waitForAnswer(request: PermissionRequest): Promise<PermissionDecision> {
    const timeoutMs = this.spec.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
    return new Promise((resolve) => {
      const entry: PendingPermission = {
        requestId: request.requestId,
        kind: askUserQuestion.matches(request) ? "question" : planReview.matches(request) ? "plan" : "tool",
        toolName: request.toolName,
        input: request.input,
        since: Date.now(),
      };
      const settle = (decision: PermissionDecision) => {
        clearTimeout(timer);
        resolve(decision);
      };
      const timer = setTimeout(() => {
        this.answerPermission(request.requestId, {
          behavior: "deny",
          message: `no answer to this permission request within ${Math.round(timeoutMs / 1000)} s, so it was denied`,
        });
      }, timeoutMs);
      request.signal.addEventListener(
        "abort",
        () => {
          this.#pending.delete(request.requestId);
          clearTimeout(timer);
        },
        { once: true },
      );
      this.#pending.set(request.requestId, { entry, resolve: settle });
      // Listeners first (one may put the request to a user), then the status that wakes waiters.
      // A listener's bug does not answer the request: it still waits for answerPermission().
      this.#permissionRequests.emit(entry);
      this.#setStatus("awaiting_permission");
    });
  }

  #keep(message: CliMessage): void {
    this.#kept.push(message);
    if (this.#kept.length > MAX_KEPT_MESSAGES) {
      this.#kept.shift();
      this.#dropped++;
    }
  }

  #setStatus(status: SessionStatus): void {
    if (this.#status === status || this.#status === "closed") return;
    this.#status = status;
    this.#host.onStatus(this);
  }
}
