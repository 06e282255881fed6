// The Worker: one claude process and session, with the whole control protocol, turns and close.
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { AbortError } from "../errors.ts";
import type {
  CliMessage,
  CommandLifecycleMessage,
  ControlResponseMessage,
  InitializeRequest,
  McpServerConfig,
  OutboundControlRequest,
  PermissionMode,
  SystemInitMessage,
} from "../protocol/index.ts";
import {
  type ContextUsage,
  ContextUsageSchema,
  type GetTaskOutputResponse,
  GetTaskOutputResponseSchema,
  type ListModelsResponse,
  ListModelsResponseSchema,
  type McpCallResponse,
  McpCallResponseSchema,
  type PermissionRulesResponse,
  PermissionRulesResponseSchema,
  parseCliMessage,
  type ReloadPluginsResponse,
  ReloadPluginsResponseSchema,
  type ReloadSkillsResponse,
  ReloadSkillsResponseSchema,
  type RewindFilesResponse,
  RewindFilesResponseSchema,
  type SetPermissionModeResponse,
  SetPermissionModeResponseSchema,
  type SettingsResponse,
  SettingsResponseSchema,
  type UsageResponse,
  UsageResponseSchema,
  userMessage,
} from "../protocol/index.ts";
import { EventHub, type Listener } from "../util/event-hub.ts";
import { type BackgroundTask, BackgroundWork } from "./background.ts";
import { ControlChannel, type ControlPayload } from "./control-channel.ts";
import {
  ControlRequestError,
  type ExitDetails,
  type InvalidControlAnswerError,
  NoTurnRunningError,
  ProtocolError,
  RewindFilesError,
  SessionNotFoundError,
  StartupFailedError,
  TurnFailedError,
  WorkerClosedError,
  WorkerExitedError,
  WorkerOptionsError,
  WorkingDirectoryError,
} from "./errors.ts";
import { HookRegistry } from "./hooks.ts";
import { InboundRequests, refuseUnknownControlRequest } from "./inbound.ts";
import { locateClaude } from "./locate-cli.ts";
import { McpBridge } from "./mcp-bridge.ts";
import { buildArgs, buildEnv, initializeSettings, sessionOptionsProblem, type WorkerOptions } from "./options.ts";
import type { PermissionRequest } from "./permissions.ts";
import { startProcessTransport } from "./process-transport.ts";
import { sessionTokens, type TokenCounts } from "./session-usage.ts";
import type { Transport, TransportFactory } from "./transport.ts";
import { type Prompt, Turn, type TurnResult } from "./turn.ts";

export type WorkerState = "starting" | "ready" | "busy" | "awaiting_permission" | "idle" | "closing" | "exited" | "failed";

export type WorkerEvent =
  | { type: "state"; state: WorkerState; previous: WorkerState }
  | { type: "message"; message: CliMessage }
  | { type: "malformed_line"; line: string; error: Error }
  | { type: "permission_request"; requestId: string; request: Omit<PermissionRequest, "signal"> }
  | { type: "permission_settled"; requestId: string }
  /** A background task of the session started, progressed or ended. */
  | { type: "background_task"; task: BackgroundTask }
  /** A handler answered a CLI request with something the protocol does not allow; the CLI got an error answer. */
  | { type: "invalid_answer"; requestId: string; error: InvalidControlAnswerError };

export type WorkerListener = Listener<WorkerEvent>;

export interface SendOptions {
  /** Aborting interrupts the turn (or drops it if it has not started). */
  signal?: AbortSignal;
  /**
   * True: the prompt is text only, never an `@path` file read or a slash
   * command (client_composed). Default: the worker's `verbatimPrompts`. A
   * prompt built from anything a model or another program wrote must be verbatim.
   */
  verbatim?: boolean;
}

const DEFAULTS = {
  initializeTimeoutMs: 60_000,
  controlTimeoutMs: 30_000,
  hookTimeoutMs: 60_000,
  closeGraceMs: 2_000,
};

/**
 * When the session's background work ended while it was idle (a stopped task), how long
 * to wait for the turn the CLI may start to report it before the turn counts as done.
 */
const QUIET_AFTER_BACKGROUND_MS = 2_000;

/**
 * One claude process and one session: initialize, turns, the control protocol
 * in both directions, and an end that is always observed.
 */
export class Worker {
  #initializeResponse: ControlPayload = {};
  #session: SystemInitMessage | undefined;
  readonly #events = new EventHub<WorkerEvent>();
  #stateValue: WorkerState = "starting";
  readonly #transport: Transport;
  readonly #channel: ControlChannel;
  readonly #hooks: HookRegistry;
  readonly #inbound: InboundRequests;
  readonly #turns: Turn[] = [];
  #pendingPermissions = 0;
  readonly #background = new BackgroundWork();
  /** From session_state_changed (buildEnv turns it on); undefined from a CLI that does not send it. */
  #sessionState: string | undefined;
  /** The session's running token totals at the latest result. */
  #tokens: TokenCounts | undefined;
  #quietTimer: ReturnType<typeof setTimeout> | undefined;
  /** Messages written into the running turn (steer) that the CLI has not completed yet, by uuid. */
  readonly #steering = new Set<string>();
  #failure: Error | undefined;
  /** A startup failure the CLI named on a result before it exited. */
  #startupFailure: { reason: string; errors: string[] } | undefined;
  #closing: Promise<ExitDetails> | undefined;

  readonly #options: WorkerOptions;
  readonly #mcp: McpBridge;

  private constructor(options: WorkerOptions, mcp: McpBridge, command: string, transport: TransportFactory) {
    this.#options = options;
    this.#mcp = mcp;
    this.#hooks = new HookRegistry(options.hooks);
    this.#transport = transport(
      {
        command,
        args: buildArgs(options),
        cwd: options.cwd,
        env: buildEnv(options),
        maxLineBytes: options.maxLineBytes,
        stderrTailBytes: options.stderrTailBytes,
      },
      {
        onValue: (value) => this.#receive(value),
        onMalformedLine: (line, error) => this.#events.emit({ type: "malformed_line", line, error }),
        onFatal: (error) => this.#fail(new ProtocolError(`claude's output could not be read: ${error.message}`, error)),
      },
    );
    this.#channel = new ControlChannel((message) => this.#transport.write(message), {
      onInvalidAnswer: (requestId, error) => this.#events.emit({ type: "invalid_answer", requestId, error }),
    });
    this.#inbound = new InboundRequests({
      channel: this.#channel,
      hooks: this.#hooks,
      mcp,
      options,
      hookTimeoutMs: options.hookTimeoutMs ?? DEFAULTS.hookTimeoutMs,
      sessionId: () => this.sessionId,
      onPermissionStart: (requestId, request) => {
        this.#pendingPermissions++;
        if (this.#stateValue === "busy") this.#setState("awaiting_permission");
        this.#events.emit({ type: "permission_request", requestId, request });
      },
      onPermissionEnd: (requestId) => {
        this.#pendingPermissions--;
        this.#events.emit({ type: "permission_settled", requestId });
        if (this.#pendingPermissions === 0 && this.#stateValue === "awaiting_permission") this.#setState("busy");
      },
    });
    void this.#transport.exited.then((details) => this.#onExit(details));
  }

  /**
   * Starts claude and initializes the session. On any failure the process is
   * ended before this rejects. `transport` starts the other end: a claude
   * process unless told otherwise (tests speak the protocol in memory).
   */
  static async start(options: WorkerOptions = {}, signal?: AbortSignal, transport: TransportFactory = startProcessTransport): Promise<Worker> {
    const problem = sessionOptionsProblem(options);
    if (problem !== undefined) throw new WorkerOptionsError(problem);
    if (options.cwd !== undefined) {
      let isDir = false;
      try {
        isDir = statSync(options.cwd).isDirectory();
      } catch (error) {
        throw new WorkingDirectoryError(options.cwd, error);
      }
      if (!isDir) throw new WorkingDirectoryError(options.cwd);
    }
    const command = locateClaude(options.claudePath);
    const mcp = await McpBridge.connect(options.sdkMcpServers ?? {});
    const worker = new Worker(options, mcp, command, transport);
    try {
      await worker.#initialize(signal);
    } catch (error) {
      await worker.kill();
      throw options.resume !== undefined ? missingSession(error, options.resume) : error;
    }
    return worker;
  }

  get state(): WorkerState {
    return this.#stateValue;
  }

  get pid(): number | undefined {
    return this.#transport.pid;
  }

  /** The CLI's answer to initialize (commands, models, account, …). */
  get initializeResponse(): ControlPayload {
    return this.#initializeResponse;
  }

  /** The latest system/init message: session id, tools, model, MCP servers, agents. */
  get session(): SystemInitMessage | undefined {
    return this.#session;
  }

  get sessionId(): string | undefined {
    return this.#session?.session_id;
  }

  /** Resolves when the process has exited, however it ended. */
  get exited(): Promise<ExitDetails> {
    return this.#transport.exited;
  }

  /** Subscribes to state changes, messages and permission requests. Returns the unsubscribe function. */
  on(listener: WorkerListener): () => void {
    return this.#events.on(listener);
  }

  /** The worker's events as a stream, until it exits or the signal aborts. */
  events(signal?: AbortSignal): AsyncIterable<WorkerEvent> {
    const stream = this.#events.stream({
      signal,
      endAfter: (event) => event.type === "state" && (event.state === "exited" || event.state === "failed"),
    });
    void this.exited.then(() => stream.end());
    return stream;
  }

  /**
   * Sends a prompt and streams that turn's messages, ending with its result.
   * Prompts sent while a turn runs wait their turn. Aborting the signal
   * interrupts the turn (or drops it if it has not started).
   */
  send(prompt: Prompt, options: SendOptions = {}): Turn {
    const verbatim = options.verbatim ?? this.#options.verbatimPrompts === true;
    const turn = new Turn(prompt, options.signal, { named: this.#options.fileCheckpointing === true, verbatim });
    if (this.#failure || this.#closing) {
      turn.fail(this.#failure ?? new WorkerClosedError("the turn"));
      return turn;
    }
    if (options.signal?.aborted) {
      turn.fail(new AbortError("the turn", options.signal.reason));
      return turn;
    }
    this.#turns.push(turn);
    const { signal } = options;
    if (signal !== undefined) {
      const onAbort = () => this.#abortTurn(turn);
      signal.addEventListener("abort", onAbort, { once: true });
      // The signal may outlive the turn (a run's, a composite that Node keeps while it has listeners): it must not hold the turn.
      const off = () => signal.removeEventListener("abort", onAbort);
      turn.result.then(off, off);
    }
    if (this.#turns.length === 1) this.#startTurn(turn);
    return turn;
  }

  /**
   * Runs one turn and resolves with its buffered result. A turn that ends in
   * error (no login, an API error, max turns, an interrupt) rejects with a
   * TurnFailedError that holds the result, as execa rejects a failed command;
   * with `reject: false` it resolves with that result instead.
   */
  async run(prompt: Prompt, options: SendOptions & { reject?: boolean } = {}): Promise<TurnResult> {
    const { reject, ...sendOptions } = options;
    const result = await this.send(prompt, sendOptions).collect();
    if (result.isError && reject !== false) throw new TurnFailedError(result);
    return result;
  }

  /** Whether a turn runs that a message or an interrupt can still reach: not before its prompt, nor once its last answer is in. */
  get turnReachable(): boolean {
    const turn = this.#turns[0];
    return turn !== undefined && !this.#failure && !this.#closing && !this.#endingTurn(turn);
  }

  /**
   * Writes a message into the running turn: the CLI takes it at the turn's next step
   * ("The user sent a new message while you were working: …") and the turn ends with
   * the answer after it. Always verbatim: text only, never a file read or a command.
   * Throws NoTurnRunningError when no turn runs or the one running has its last result.
   * Returns the id it was written with, which the CLI's command_lifecycle messages name.
   */
  steer(text: string): string {
    if (!this.turnReachable) throw new NoTurnRunningError();
    // Named, so that the turn is not done until the CLI has completed this message (see #sessionDone).
    const uuid = randomUUID();
    this.#steering.add(uuid);
    if (!this.#transport.write(userMessage(text, uuid, { verbatim: true }))) {
      this.#steering.delete(uuid);
      throw new NoTurnRunningError();
    }
    return uuid;
  }

  /** Interrupts the running turn; its result still arrives and ends the turn. */
  async interrupt(): Promise<void> {
    await this.control({ subtype: "interrupt" });
  }

  async setModel(model?: string): Promise<void> {
    await this.control({ subtype: "set_model", ...(model !== undefined && { model }) });
  }

  /** Changes how tool use is approved; resolves with the mode in effect (the CLI may refuse one, e.g. "auto"). */
  async setPermissionMode(mode: PermissionMode): Promise<SetPermissionModeResponse> {
    return SetPermissionModeResponseSchema.parse(await this.control({ subtype: "set_permission_mode", mode }));
  }

  /** The account's plan and rate limits as the CLI knows them. */
  async usage(): Promise<UsageResponse> {
    return UsageResponseSchema.parse(await this.control({ subtype: "get_usage" }));
  }

  /** The models this CLI offers. */
  async listModels(): Promise<ListModelsResponse> {
    return ListModelsResponseSchema.parse(await this.control({ subtype: "list_models" }));
  }

  /** The permission rules in effect, by source. */
  async permissionRules(): Promise<PermissionRulesResponse> {
    return PermissionRulesResponseSchema.parse(await this.control({ subtype: "list_permission_rules" }));
  }

  /** The session's merged settings. */
  async settings(): Promise<SettingsResponse> {
    return SettingsResponseSchema.parse(await this.control({ subtype: "get_settings" }));
  }

  /** Applies settings over the flag-settings layer of the running session. */
  async applySettings(settings: Record<string, unknown>): Promise<ControlPayload> {
    return this.control({ subtype: "apply_flag_settings", settings });
  }

  /** Calls a tool of one of the CLI's MCP servers (`mcp__server__tool`) outside any turn. */
  async mcpCall(tool: string, args: Record<string, unknown> = {}): Promise<McpCallResponse> {
    return McpCallResponseSchema.parse(await this.control({ subtype: "mcp_call", tool, arguments: args }));
  }

  /** Withdraws a queued prompt (a Turn's userMessageId) before it starts. */
  async cancelQueuedMessage(messageUuid: string): Promise<ControlPayload> {
    return this.control({ subtype: "cancel_async_message", message_uuid: messageUuid });
  }

  /** Names the session (its title in listings and transcripts). */
  async renameSession(title: string): Promise<ControlPayload> {
    return this.control({ subtype: "rename_session", title });
  }

  /** Reads the plugins again; resolves with the session's commands and MCP servers now. */
  async reloadPlugins(): Promise<ReloadPluginsResponse> {
    return ReloadPluginsResponseSchema.parse(await this.control({ subtype: "reload_plugins" }));
  }

  /** Reads the skills again. */
  async reloadSkills(): Promise<ReloadSkillsResponse> {
    return ReloadSkillsResponseSchema.parse(await this.control({ subtype: "reload_skills" }));
  }

  async setMaxThinkingTokens(tokens: number | null): Promise<void> {
    await this.control({ subtype: "set_max_thinking_tokens", max_thinking_tokens: tokens });
  }

  /**
   * Restores the files the session edited to their state when the prompt with
   * this id was sent (a Turn's `userMessageId`); with `dryRun`, only reports
   * what would change. Needs the `fileCheckpointing` option.
   */
  async rewindFiles(userMessageId: string, options: { dryRun?: boolean } = {}): Promise<RewindFilesResponse> {
    if (!this.#options.fileCheckpointing)
      throw new RewindFilesError(`message ${userMessageId}`, "file checkpointing is off; start the worker with fileCheckpointing: true");
    let payload: ControlPayload;
    try {
      payload = await this.control({ subtype: "rewind_files", user_message_id: userMessageId, ...(options.dryRun && { dry_run: true }) });
    } catch (error) {
      // The CLI refuses a message it holds no checkpoint for.
      if (error instanceof ControlRequestError) throw new RewindFilesError(`message ${userMessageId}`, error.cliMessage, error);
      throw error;
    }
    const answer = RewindFilesResponseSchema.parse(payload);
    if (!answer.canRewind) throw new RewindFilesError(`message ${userMessageId}`, answer.error ?? "the CLI cannot rewind to that message");
    return answer;
  }

  /**
   * How the context window is used, by category. `detail: "summary"` (the
   * default here) estimates locally; "full" counts each category with the
   * API's token counter, one request per category.
   */
  async contextUsage(options: { detail?: "summary" | "full" } = {}): Promise<ContextUsage> {
    return ContextUsageSchema.parse(await this.control({ subtype: "get_context_usage", detail: options.detail ?? "summary" }));
  }

  /** Reconnects an MCP server the CLI had lost (or failed to start). */
  async mcpReconnect(serverName: string): Promise<ControlPayload> {
    return this.control({ subtype: "mcp_reconnect", serverName });
  }

  /** Turns one of the CLI's MCP servers off or on for the rest of the session. */
  async mcpToggle(serverName: string, enabled: boolean): Promise<ControlPayload> {
    return this.control({ subtype: "mcp_toggle", serverName, enabled });
  }

  async mcpStatus(): Promise<ControlPayload> {
    return this.control({ subtype: "mcp_status" });
  }

  async mcpSetServers(servers: Record<string, McpServerConfig>): Promise<ControlPayload> {
    return this.control({ subtype: "mcp_set_servers", servers });
  }

  /** The session's background tasks (workflows, background agents and shells, monitors), running and ended. */
  get backgroundTasks(): BackgroundTask[] {
    return this.#background.tasks;
  }

  /** Background tasks still running: while there are any, the turn that started them has not ended. */
  get runningBackgroundTasks(): BackgroundTask[] {
    return this.#background.running;
  }

  /** Stops one background task of the session (`stop_task`); the CLI reports it ended with task_notification "stopped". */
  async stopTask(taskId: string): Promise<void> {
    await this.control({ subtype: "stop_task", task_id: taskId });
  }

  /** Stops every background task still running; resolves when each was asked (a task that ended meanwhile is no failure). */
  async stopBackgroundTasks(): Promise<void> {
    await Promise.allSettled(this.#background.running.map((task) => this.stopTask(task.id)));
  }

  /** The end (at most the last 8 KiB) of a background shell's or Monitor's output. */
  async taskOutput(taskId: string): Promise<GetTaskOutputResponse> {
    return GetTaskOutputResponseSchema.parse(await this.control({ subtype: "get_task_output", task_id: taskId }));
  }

  /** Sends running foreground work (Bash commands, subagents) to the background: one tool_use's, or all of it. */
  async backgroundForegroundTasks(toolUseId?: string): Promise<void> {
    await this.control({ subtype: "background_tasks", ...(toolUseId !== undefined && { tool_use_id: toolUseId }) });
  }

  /** Sends any control request the protocol knows and resolves with the CLI's success payload. */
  control(request: OutboundControlRequest): Promise<ControlPayload> {
    if (this.#failure) return Promise.reject(this.#failure);
    return this.#channel.request(request, this.#options.controlTimeoutMs ?? DEFAULTS.controlTimeoutMs);
  }

  /**
   * Ends the session: closes stdin, waits a grace period, then SIGTERM and
   * SIGKILL. Turns still running or queued reject with WorkerClosedError.
   */
  close(): Promise<ExitDetails> {
    if (!this.#closing) {
      if (!this.#transport.hasExited) this.#setState("closing");
      this.#closing = this.#transport.terminate({ graceMs: this.#options.closeGraceMs ?? DEFAULTS.closeGraceMs });
    }
    return this.#closing;
  }

  /** Ends the process and its tools at once (the SIGKILL is on its way before this returns), also while a close() is still waiting on it. */
  kill(): Promise<ExitDetails> {
    if (!this.#transport.hasExited) this.#setState("closing");
    const killed = this.#transport.kill();
    this.#closing ??= killed;
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #initialize(signal?: AbortSignal): Promise<void> {
    const o = this.#options;
    const settings = initializeSettings(o);
    const request: InitializeRequest = {
      subtype: "initialize",
      ...(!this.#hooks.isEmpty && { hooks: this.#hooks.toInitialize() }),
      ...(this.#mcp.names.length > 0 && { sdkMcpServers: this.#mcp.names }),
      ...(o.jsonSchema && { jsonSchema: o.jsonSchema }),
      ...(o.systemPrompt !== undefined && { systemPrompt: [o.systemPrompt] }),
      ...(o.appendSystemPrompt !== undefined && { appendSystemPrompt: o.appendSystemPrompt }),
      ...(o.excludeDynamicSections !== undefined && { excludeDynamicSections: o.excludeDynamicSections }),
      ...(o.agents && { agents: o.agents }),
      ...(o.mcpServers !== undefined && { mcpServers: o.mcpServers }),
      ...(settings !== undefined && { settings }),
      ...(Array.isArray(o.skills) && { skills: o.skills }),
      ...(o.onUserDialog !== undefined && o.supportedDialogKinds !== undefined && { supportedDialogKinds: o.supportedDialogKinds }),
    };
    const exitedEarly = this.#transport.exited.then((details) => {
      throw this.#exitError(details, "before it answered initialize");
    });
    const aborted = new Promise<never>((_, reject) => {
      if (signal?.aborted) reject(new AbortError("starting the worker", signal.reason));
      signal?.addEventListener("abort", () => reject(new AbortError("starting the worker", signal.reason)), { once: true });
    });
    const answered = this.#channel.request(request, o.initializeTimeoutMs ?? DEFAULTS.initializeTimeoutMs);
    exitedEarly.catch(() => {});
    this.#initializeResponse = await Promise.race([answered, exitedEarly, aborted]);
    this.#setState("ready");
  }

  /** The turn has its result and nothing of it runs on: a message now could start a turn no one waits for. */
  #endingTurn(turn: Turn): boolean {
    return turn.lastResult !== undefined && !this.#background.anyRunning && this.#steering.size === 0;
  }

  #startTurn(turn: Turn): void {
    this.#setState("busy");
    turn.tokensBefore = this.#tokens;
    const content = typeof turn.prompt === "string" ? turn.prompt : [...turn.prompt];
    if (!this.#transport.write(userMessage(content, turn.userMessageId, { verbatim: turn.verbatim }))) {
      turn.fail(this.#failure ?? new WorkerClosedError("the turn"));
    }
  }

  #abortTurn(turn: Turn): void {
    if (turn.finished) return;
    if (this.#turns[0] === turn) {
      // Background work is part of the turn: it stops with it. The CLI ends the turn with a result after an interrupt.
      void this.stopBackgroundTasks().finally(() => this.interrupt().catch(() => {}));
      return;
    }
    const index = this.#turns.indexOf(turn);
    if (index > 0) this.#turns.splice(index, 1);
    turn.fail(new AbortError("the turn", turn.signal?.reason));
  }

  #receive(value: unknown): void {
    const message = parseCliMessage(value);
    switch (message.type) {
      case "keep_alive":
        return;
      case "control_response":
        this.#channel.handleResponse(message.response);
        this.#answerPending(message.response);
        return;
      case "control_cancel_request":
        this.#channel.handleCancel(message.request_id);
        return;
      case "control_request":
        this.#inbound.route(message);
        return;
      case "unknown":
        if (refuseUnknownControlRequest(this.#channel, message.raw)) return;
        break;
      case "system":
        if (message.subtype === "init") this.#session = message;
        break;
      case "result":
        if (typeof message.startup_failure_reason === "string") {
          this.#startupFailure = { reason: message.startup_failure_reason, errors: message.errors ?? [] };
        }
        break;
    }
    const turn = this.#turns[0];
    if (message.type === "system" && message.subtype === "session_state_changed") {
      // cadre asks for these (buildEnv) to know when a turn is over: no part of any answer, transcript or event.
      this.#sessionState = message.state;
      if (turn && this.#sessionDone(message, turn)) this.#finishTurn();
      return;
    }
    const changed = this.#background.observe(message);
    this.#events.emit({ type: "message", message });
    if (changed) this.#events.emit({ type: "background_task", task: changed });
    // A prompt's lifecycle is not part of any answer; its "completed" even comes after the result.
    if (message.type === "command_lifecycle") {
      if (this.#steered(message) && turn && this.#sessionDone(message, turn)) this.#finishTurn();
      return;
    }
    if (message.type === "result") {
      this.#tokens = sessionTokens(message) ?? this.#tokens;
      // An interrupted turn takes no further message: none of them holds the turn open.
      if (message.is_error === true && String(message.terminal_reason ?? "").startsWith("aborted")) this.#steering.clear();
    }
    if (!turn) return;
    turn.push(message);
    if (this.#sessionDone(message, turn)) this.#finishTurn();
  }

  /**
   * Whether the session is done with the turn: it has a result, and no background
   * task is running. Measured on CLI 2.1.332: a background agent or workflow holds
   * the session ("idle" comes after the turn its notification started), a background
   * shell does not ("idle" after the first result, then its notification starts a
   * turn of its own, with its own "idle"). A CLI without session_state_changed ends
   * the turn at a result with nothing running.
   */
  #sessionDone(message: CliMessage, turn: Turn): boolean {
    clearTimeout(this.#quietTimer);
    if (turn.lastResult === undefined || this.#steering.size > 0) return false;
    if (this.#background.anyRunning) return false;
    // The last message written into the turn may be completed after its result.
    const steered = message.type === "command_lifecycle";
    if (this.#sessionState === undefined) return message.type === "result" || steered;
    if (this.#sessionState !== "idle") return false;
    if (steered || (message.type === "system" && message.subtype === "session_state_changed")) return true;
    // Background work ended while the session was idle: its notification usually starts a turn ("running" cancels this).
    if (message.type === "system" && message.subtype === "background_tasks_changed") {
      this.#quietTimer = setTimeout(() => {
        if (this.#turns[0] === turn && this.#sessionState === "idle" && !this.#background.anyRunning) this.#finishTurn();
      }, QUIET_AFTER_BACKGROUND_MS);
      this.#quietTimer.unref?.();
    }
    return false;
  }

  /** A message written into the turn (steer) is done with: true when that was the last one the turn waited for. */
  #steered(message: CommandLifecycleMessage): boolean {
    if (message.state === "queued" || message.state === "started") return false;
    return this.#steering.delete(message.command_uuid) && this.#steering.size === 0;
  }

  /**
   * A control response may list CLI requests still waiting (permissions,
   * dialogs, elicitations), e.g. ones sent before cadre could see them: each
   * one not being answered yet is answered now, like a live one.
   */
  #answerPending(response: ControlResponseMessage["response"]): void {
    const waiting = [
      ...(response.pending_permission_requests ?? []),
      ...(response.pending_user_dialog_requests ?? []),
      ...(response.pending_elicitation_requests ?? []),
    ];
    for (const request of waiting) if (!this.#channel.isAnswering(request.request_id)) this.#inbound.route(request);
  }

  #finishTurn(): void {
    for (const task of this.#background.readLateResults()) this.#events.emit({ type: "background_task", task });
    this.#turns.shift()?.finish();
    const next = this.#turns[0];
    if (next) this.#startTurn(next);
    else if (!this.#closing && !this.#failure) this.#setState("idle");
  }

  #fail(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    this.#channel.close(error);
    for (const turn of this.#turns.splice(0)) turn.fail(error);
    void this.#transport.kill();
  }

  #onExit(details: ExitDetails): void {
    const expected = this.#closing !== undefined;
    const unfinished = this.#turns.length > 0 || this.#channel.pendingOutbound > 0 || this.#channel.runningInbound > 0;
    if (!this.#failure) {
      const during = this.#turns.length > 0 ? "during a turn" : this.#stateValue === "starting" ? "while starting" : "while idle";
      this.#failure = expected ? new WorkerClosedError("the turn") : this.#exitError(details, during);
      this.#channel.close(this.#failure);
      for (const turn of this.#turns.splice(0)) turn.fail(this.#failure);
    }
    void this.#mcp.close();
    const cleanExit = expected || (!unfinished && details.exitCode === 0);
    this.#setState(cleanExit && !(this.#failure instanceof ProtocolError) ? "exited" : "failed");
  }

  /** Why the process ended unasked: the startup failure it named, else its exit. */
  #exitError(details: ExitDetails, during: string): Error {
    const startup = this.#startupFailure;
    return startup ? new StartupFailedError(startup.reason, startup.errors, details) : new WorkerExitedError(details, during);
  }

  #setState(state: WorkerState): void {
    const previous = this.#stateValue;
    if (previous === state || previous === "exited" || previous === "failed") return;
    this.#stateValue = state;
    this.#events.emit({ type: "state", state, previous });
  }
}

/** The CLI's own words, on the pinned version, for a session it cannot find. */
const NO_SUCH_SESSION = /No conversation found with session ID/;

function missingSession(error: unknown, sessionId: string): unknown {
  return error instanceof WorkerExitedError && NO_SUCH_SESSION.test(error.stderrTail) ? new SessionNotFoundError(sessionId, error) : error;
}
