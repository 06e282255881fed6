// The Orchestrator: tasks fanned out to claude workers under limits, with retries, budget, sessions and routing.
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { CadreError } from "../errors.ts";
import type { CliMessage } from "../protocol/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { own } from "../util/own.ts";
import type { TurnResult, Worker, WorkerOptions } from "../worker/index.ts";
import { AccessCheck } from "./access-check.ts";
import { addUsage, type Charge, emptyUsage, WorkerCost } from "./accounting.ts";
import { AgentSessions, type SessionKind } from "./agent-sessions.ts";
import { runAttempt } from "./attempt.ts";
import type { Budget } from "./budget.ts";
import { Budgets, type TaskBudget } from "./budgets.ts";
import { CacheStagger, planAhead } from "./cache-stagger.ts";
import { layerWorkerOptions, sessionWorkerOptions, taskWorkerOptions } from "./compose.ts";
import { type BudgetExceededError, InvalidTaskError, OrchestratorClosedError, UnknownAgentError } from "./errors.ts";
import { errorSummary, isRateLimitStatus, isRetryable, turnFailure } from "./failure.ts";
import { LeasePolicy } from "./lease-policy.ts";
import { PeerNetwork } from "./peer-network.ts";
import { MemoryInbox } from "./peers/inbox.ts";
import { PlanWindow } from "./plan-window.ts";
import { PriceBook } from "./price-book.ts";
import { ReplyCounts } from "./reply-counts.ts";
import { ReplyLog } from "./reply-log.ts";
import { RunningTasks, type SteerOrigin } from "./running-tasks.ts";
import {
  Admission,
  type Admitted,
  AutoConcurrency,
  LOCAL_MACHINE,
  MAX_AUTO_CONCURRENCY,
  retryWithBackoff,
  Scheduler,
  type Withdrawal,
} from "./scheduler/index.ts";
import { Session, type SessionHost, type SessionSpec } from "./session.ts";
import { SessionRecords, sessionIdOf } from "./session-records.ts";
import { StartGate, TaskStops } from "./start-gate.ts";
import { type TaskRecord, taskResult } from "./task-record.ts";
import { TranscriptDirectory } from "./transcripts.ts";
import {
  type AgentSpec,
  type BudgetUse,
  type OrchestratorEvent,
  type OrchestratorOptions,
  type SessionRecord,
  type TaskResult,
  type TaskRunner,
  type TaskSpec,
  TaskSpecSchema,
  type TaskStatus,
  type Usage,
  type WorkerOrigin,
} from "./types.ts";
import { WorkerFactory, type WorkerPlan } from "./worker-factory.ts";
import { WorkerPool } from "./worker-pool.ts";

/** Live task workers at once, for an orchestrator (or a distributed run, or a host) that is not told. */
export const DEFAULT_CONCURRENCY = 4;
/** Further attempts after a transient failure, for tasks that do not say (the swarm file's default too). */
export const DEFAULT_RETRIES = 2;
/** Children may spawn children, but not without end. */
const MAX_SPAWN_DEPTH = 3;

/**
 * Fans tasks out to claude workers under a global and per-agent limit, with
 * retries, time limits, a budget, rate-limit back-off, one hook registry and
 * the built-in peer tools that let workers ask each other.
 */
export class Orchestrator implements TaskRunner {
  readonly scheduler: Scheduler;
  readonly #hub = new EventHub<OrchestratorEvent>();
  /** Whether the workers can reach the model at all, told once by the first worker's answers. */
  readonly #access = new AccessCheck((news) =>
    this.#hub.emit(
      news.kind === "waiting" ? { type: "access_waiting", message: news.message } : { type: "access_refused", error: errorSummary(news.error) },
    ),
  );
  readonly #budgets: Budgets;
  /** Prices each model call as its reply arrives, so that budgets count spend as it happens. */
  readonly #prices = new PriceBook();
  readonly #plan: PlanWindow;
  readonly #admission: Admission;
  /** Tasks handed in (run, map) and not ended yet, whether they wait or run. */
  #tasksUnderway = 0;
  /** Undefined when turned off: every worker sends its first prompt at once. */
  readonly #stagger: CacheStagger | undefined;
  readonly #gate: StartGate;
  readonly #leases: LeasePolicy;
  readonly #closing = new AbortController();
  /** See #stopOf. */
  readonly #stops = new WeakMap<AbortSignal, AbortSignal>();
  readonly #transcripts: TranscriptDirectory | undefined;
  readonly #replies: ReplyLog | undefined;
  readonly #agentSessions: AgentSessions;
  readonly #records = new SessionRecords();
  readonly #peers: PeerNetwork<TaskRecord>;
  readonly #factory: WorkerFactory<TaskRecord>;
  readonly #pool: WorkerPool<TaskRecord>;
  readonly #liveWorkers = new Set<Worker>();
  readonly #replyCounts = new ReplyCounts();
  readonly #running = new RunningTasks({
    told: (task, { action, origin, text, step }) =>
      this.#hub.emit({
        type: "task_steered",
        task,
        action,
        from: origin.from,
        ...(text !== undefined && { text }),
        ...(step !== undefined && { step }),
        at: Date.now(),
      }),
    taken: (task, step) => this.#hub.emit({ type: "task_steer_taken", task, step, at: Date.now() }),
  });
  readonly #openSessions = new Set<Session>();
  readonly #totalUsage = emptyUsage();
  readonly #statusCounts: Record<TaskStatus, number> = { succeeded: 0, failed: 0, cancelled: 0, skipped: 0 };

  constructor(readonly options: OrchestratorOptions = {}) {
    // First, so that a bad limit fails here: the scheduler is the one place that checks `concurrency` and `agentLimits`.
    const autoConcurrency = options.concurrency === "auto" ? new AutoConcurrency(options.machine) : undefined;
    const concurrency = autoConcurrency?.limit ?? (options.concurrency as number | undefined) ?? DEFAULT_CONCURRENCY;
    this.scheduler = new Scheduler({ concurrency, keyLimits: options.agentLimits });
    this.#admission = new Admission(autoConcurrency ? MAX_AUTO_CONCURRENCY : concurrency, options.agentLimits);
    this.scheduler.onEvent((event) => {
      if (event.type === "rate_limit") this.#hub.emit({ type: "rate_limit", state: event.state });
    });
    this.#budgets = new Budgets({
      runUsd: options.budgetUsd,
      agentUsd: Object.fromEntries(
        Object.entries(options.agents ?? {}).flatMap(([name, a]) => (a.budgetUsd === undefined ? [] : [[name, a.budgetUsd]])),
      ),
      ledgerFor: (scope) => (scope.kind === "run" ? options.ledger : options.scopedLedger?.(scope)),
      // With a shared ledger, spending elsewhere may reach a budget: the work here stops too.
      onReached: (reached) => this.#stopForBudget(reached),
      forecast: options.budgetForecast,
    });
    this.#plan = new PlanWindow({ pauseAt: options.planUsage?.pauseAt, tell: (news) => this.#hub.emit({ type: "plan_window", ...news }) });
    const stagger = options.cacheStagger ?? true;
    this.#stagger = stagger === false ? undefined : new CacheStagger(stagger === true ? {} : stagger);
    this.#transcripts = options.outDir ? new TranscriptDirectory(options.outDir) : undefined;
    this.#replies = options.repliesPath ? new ReplyLog(options.repliesPath, { runId: options.runId ?? "" }) : undefined;
    this.#agentSessions = new AgentSessions(
      (kind, agent, chain, asker, askerNow) => this.#startSessionWorker(kind, agent, chain, asker, askerNow),
      (agent) => this.#budgets.applying(agent),
    );
    this.#peers = new PeerNetwork<TaskRecord>({
      agents: () => options.agents ?? {},
      connections: options.connections,
      sessions: this.#agentSessions,
      inbox: options.inbox ?? new MemoryInbox(),
      spawn: (parent, prompt, agent, signal) => this.#spawnChild(parent, prompt, agent, signal),
    });
    this.#factory = new WorkerFactory({
      options,
      sessions: this.#agentSessions,
      peers: this.#peers,
      emit: (event) => this.#hub.emit(event),
      closing: this.#closing.signal,
      track: (worker) => this.#track(worker),
    });
    this.#pool = new WorkerPool({
      maxIdle: () => this.scheduler.rateLimit.effectiveLimit,
      workWaiting: () => this.scheduler.waiting > 0,
      onResetCost: (costUsd, usage) => this.#charge(undefined, costUsd, usage),
      onRecycled: (bound, task, reason) => task && this.#hub.emit({ type: "worker_recycled", task, pid: bound.worker.pid, reason }),
    });
    this.#gate = new StartGate({ budgets: this.#budgets, plan: this.#plan, access: options.accessCheck === false ? undefined : this.#access });
    this.#leases = new LeasePolicy({
      reuse: options.reuse,
      stagger: this.#stagger,
      autoConcurrency,
      pool: this.#pool,
      scheduler: this.scheduler,
      processLimitUsd: (budgets) => this.#budgets.processLimitUsd(budgets),
    });
  }

  /** Subscribes to every event; returns the unsubscribe function. */
  on(listener: (event: OrchestratorEvent) => void): () => void {
    return this.#hub.on(listener);
  }

  /** Every event from now on as a stream, until the signal aborts or the orchestrator closes. */
  events(signal?: AbortSignal): AsyncIterable<OrchestratorEvent> {
    return this.#hub.stream({ signal });
  }

  get totals(): { costUsd: number; usage: Usage; tasks: Record<TaskStatus, number>; budgetExceeded: boolean } {
    return {
      costUsd: this.#budgets.run.spentUsd,
      usage: { ...this.#totalUsage },
      tasks: { ...this.#statusCounts },
      budgetExceeded: this.#budgets.run.exceeded,
    };
  }

  /** Every budget with a limit (the run's, each agent's, each task's that has started) and its use so far. */
  get budgets(): BudgetUse[] {
    return this.#budgets.list();
  }

  /**
   * What is left of each budget that applies to work of `agent` (and of a
   * task budget counted under `task`): what a workflow script's agent call
   * may still spend. Empty when none has a limit.
   */
  budgetStatus(agent?: string, task?: TaskBudget): BudgetUse[] {
    return this.#budgets.status(this.#budgets.applying(agent, task));
  }

  /**
   * The worker sessions beside the tasks: peers, hook supervisors and spawned
   * children, each with its cost and transcript (transcriptPaths by `id`).
   */
  get sessionRecords(): SessionRecord[] {
    return this.#records.list();
  }

  /** Where each task's and session record's transcript was written (id → path). */
  get transcriptPaths(): ReadonlyMap<string, string> {
    return this.#transcripts?.paths ?? new Map();
  }

  /** Runs one task to its end. Resolves with its result whatever the outcome; rejects only on invalid input. */
  run(spec: TaskSpec): Promise<TaskResult> {
    return this.#admitAndExecute(this.#createRecord(spec, undefined), spec);
  }

  /**
   * Writes a message into the running turn of the task of that name: its agent takes it at its next step
   * and the task's result is its answer after it. The text is data, sent verbatim. Throws
   * TaskNotRunningError when no task of that name has a process now.
   */
  sendToTask(name: string, text: string, origin?: SteerOrigin): void {
    this.#running.send(name, text, origin);
  }

  /** Ends the running turn of the task of that name; the task ends as interrupted, its session kept to resume. */
  interruptTask(name: string, origin?: SteerOrigin): Promise<void> {
    return this.#running.interrupt(name, origin);
  }

  /**
   * Ends the task of that name as cancelled, its process and tools killed; the other tasks go on. A task that
   * waits for a slot (or the start gate, or a back-off) ends without starting a process.
   */
  stopTask(name: string, origin?: SteerOrigin): void {
    this.#running.stop(name, origin);
  }

  /** The model replies the conversation of the running task of that name holds now (the step steering is recorded at); undefined while it has no process. */
  runningTaskStep(name: string): number | undefined {
    return this.#running.step(name);
  }

  /** The names of the tasks that have a process now: those sendToTask, interruptTask and stopTask can reach. */
  get runningTaskNames(): string[] {
    return this.#running.names;
  }

  /**
   * A task of a fan-out waits as a small entry until it may join the scheduler's queues (see Admission). A user's
   * stop meanwhile lets it through at once, to end there stopped.
   */
  async #admitAndExecute(record: TaskRecord, spec: TaskSpec): Promise<TaskResult> {
    this.#tasksUnderway++;
    const held: Withdrawal = {};
    let stopped: Error | undefined;
    const forget = this.#running.add(
      record.info,
      (reason) => {
        stopped = reason;
        held.withdraw?.();
      },
      // Held before the scheduler: no conversation yet.
      () => 0,
    );
    try {
      const admitted = await this.#admission.enter(spec.agent, spec.priority ?? 0, this.#waitingOf(record, spec.signal), held);
      forget();
      return await this.#execute(record, spec, false, admitted, stopped);
    } finally {
      this.#tasksUnderway--;
    }
  }

  /**
   * `count` tasks of these settings are on their way (they wait for others to end, or a stage before them will make
   * them): processes for them start now on cores nothing else uses, as no task's, and the first tasks of these
   * settings take them. None starts while the tasks under way and the processes waiting for work fill the cores or the
   * concurrency, nor for a task whose process must be its own (a worktree, a session to continue, a budget the CLI
   * enforces). A process no task takes is closed after the idle timeout, or by close(). A hint: it never fails, and a
   * spec it cannot use is ignored.
   */
  prepare(spec: TaskSpec, count = 1): void {
    const busy = () => Math.min(this.#tasksUnderway, this.scheduler.rateLimit.effectiveLimit);
    // Checked first: a swarm asks on every task's end, and mostly there is no room. A task with a dollar budget of
    // its own has a process of its own (the CLI enforces what is left).
    if (this.#closing.signal.aborted || this.#aheadRoom(busy()) <= 0 || spec.budgetUsd !== undefined) return;
    if (!TaskSpecSchema.safeParse(spec).success || (spec.agent !== undefined && own(this.options.agents, spec.agent) === undefined)) return;
    const budgets = this.#budgets.applying(spec.agent);
    const overrides = taskWorkerOptions(spec);
    for (let started = 0; started < count; started++) if (!this.#startAhead(spec, overrides, budgets, busy())) return;
  }

  /**
   * Opens a long-lived session: its claude process stays between turns, each
   * turn takes a slot while it runs. Close it when done (close() of the
   * orchestrator closes every session).
   */
  openSession(spec: SessionSpec = {}): Session {
    const record = this.#newRecord(spec.name, spec.agent, undefined, sessionWorkerOptions(spec), this.#budgets.applying(spec.agent));
    let probing = false;
    const host: SessionHost = {
      startWorker: async (_session, canUseTool, resume, signal) => {
        probing = this.options.accessCheck !== false && (await this.#access.pass(signal));
        const plan = this.#factory.plan({
          context: { kind: "session", name: record.info.name, agent: record.info.agent },
          overrides: record.overrides,
          record,
          canUseTool,
        });
        // A resumed session continues its own conversation: only a new process can.
        const { worker } = resume ? await plan.start(signal, { resume }) : await this.#pool.lease(plan, { maxTasks: 1, signal });
        this.#relayWorkerEvents(worker, record);
        return worker;
      },
      schedule: async (job, key, signal) => {
        const stop = this.#waitingOf(record, signal);
        this.#budgets.throwIfExceeded(record.budgets);
        return this.scheduler.schedule((slot) => job(AbortSignal.any([stop, slot])), { key, signal: stop });
      },
      onMessage: (_session, message, charge) => this.#onWorkerMessage(record, message, charge),
      prices: this.#prices,
      onStatus: (session) => {
        // A probe session that ends or fails without telling hands the check on.
        if (probing && (session.status === "failed" || session.status === "closed")) {
          probing = false;
          this.#access.probeEnded();
        }
        this.#hub.emit({ type: "session_status", task: record.info, status: session.status });
        if (session.status === "closed") this.#openSessions.delete(session);
      },
    };
    const session = new Session(record.info, spec, host);
    this.#openSessions.add(session);
    return session;
  }

  /**
   * Starts `count` spare processes for sessions (or tasks) of an agent or of
   * session settings, ahead of demand: work whose worker settings match takes
   * one at once, and a replacement starts in the background. Spares are not
   * sessions; close() ends them. Resolves once they are up.
   */
  async prewarm(agentOrSpec: string | SessionSpec = {}, count = 1): Promise<void> {
    const spec = typeof agentOrSpec === "string" ? { agent: agentOrSpec } : agentOrSpec;
    this.#agentSpec(spec.agent);
    const plan = this.#factory.plan({
      context: { kind: "session", name: spec.name ?? "spare", agent: spec.agent },
      overrides: sessionWorkerOptions(spec),
    });
    await this.#pool.prewarm(plan.key, count, () => plan.start(undefined));
  }

  /** Runs tasks under the limits and yields each result as it finishes. */
  async *map(tasks: Iterable<TaskSpec>, options: { signal?: AbortSignal } = {}): AsyncIterable<TaskResult> {
    const specs = [...tasks].map((spec) => (options.signal ? { ...spec, signal: combine(spec.signal, options.signal) } : spec));
    const records = specs.map((spec) => this.#createRecord(spec, undefined));
    const pending = new Map(
      records.map((record, i) => [record.info.id, this.#admitAndExecute(record, specs[i]!).then((result) => ({ id: record.info.id, result }))]),
    );
    while (pending.size > 0) {
      const { id, result } = await Promise.race(pending.values());
      pending.delete(id);
      yield result;
    }
  }

  /** Cancels everything: waiting tasks are dropped, running ones stopped, every process ended. */
  async close(): Promise<void> {
    if (!this.#closing.signal.aborted) this.#closing.abort(new OrchestratorClosedError());
    this.scheduler.clear();
    await Promise.all([...this.#openSessions].map((s) => s.close()));
    await this.#agentSessions.close();
    await Promise.all([this.#pool.close(), ...[...this.#liveWorkers].map((w) => w.close())]);
    await this.scheduler.onIdle();
    await this.#transcripts?.close();
    this.#plan.close();
    await this.#replies?.close();
    this.#hub.endStreams();
  }

  /**
   * Ends every live worker (tasks, sessions, peers, supervisors) at once with
   * SIGKILL, before it returns, for when waiting is not an option (a second
   * Ctrl-C). Nothing new starts; close() still flushes the transcripts.
   */
  kill(): void {
    if (!this.#closing.signal.aborted) this.#closing.abort(new OrchestratorClosedError());
    this.scheduler.clear();
    for (const worker of this.#liveWorkers) void worker.kill();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Why no work can run (no login, an API that cannot be reached), once the first worker has told. */
  get accessRefusal(): CadreError | undefined {
    return this.#access.refusal;
  }

  /** A validated task's record; the task is announced as queued. */
  #createRecord(spec: TaskSpec, parent: TaskRecord | undefined): TaskRecord {
    const parsed = TaskSpecSchema.safeParse(spec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidTaskError(`invalid task${spec.name ? ` "${spec.name}"` : ""}: ${issue?.path.join(".") || "task"}: ${issue?.message}`);
    }
    const own =
      spec.budgetUsd === undefined ? undefined : { usd: spec.budgetUsd, name: spec.budgetName ?? spec.name ?? spec.id ?? randomUUID().slice(0, 8) };
    // A child is under its parent's budgets too, and under its own agent's.
    let budgets = this.#budgets.applying(spec.agent, own, parent?.budgets);
    // A posted task counts to its poster's agent's budget unless its own agent has one.
    if (spec.budgetAgent !== undefined && !this.#budgets.hasAgentBudget(spec.agent))
      budgets = this.#budgets.applying(spec.budgetAgent, undefined, budgets);
    const record = this.#newRecord(spec.name, spec.agent, parent, taskWorkerOptions(spec), budgets, spec.id);
    this.#hub.emit({ type: "task_queued", task: record.info });
    return record;
  }

  /** The record of a task or session; throws for an agent the orchestrator does not know. */
  #newRecord(
    name: string | undefined,
    agentName: string | undefined,
    parent: TaskRecord | undefined,
    overrides: Partial<WorkerOptions>,
    budgets: Budget[],
    id = randomUUID().slice(0, 8),
  ): TaskRecord {
    const agent = this.#agentSpec(agentName);
    return {
      info: { id, name: name ?? `task-${id}`, agent: agentName, parentId: parent?.info.id },
      overrides,
      agent,
      depth: parent ? parent.depth + 1 : 0,
      parent,
      budgets,
      costUsd: 0,
      usage: emptyUsage(),
      attempts: 0,
      sessionId: undefined,
      queuedAt: Date.now(),
      startedAt: undefined,
      prepared: false,
      attemptMessages: [],
      backgroundTasks: new Map(),
    };
  }

  /**
   * What stops work that has not started: the orchestrator's close, its budget, and the
   * caller's signal. One for each caller's signal, shared by all its tasks: a fan-out of
   * thousands waits without a signal of each task's own (AbortSignal.any costs about 2 KB).
   */
  #stopOf(signal: AbortSignal | undefined): AbortSignal {
    const key = signal ?? this.#closing.signal;
    let stop = this.#stops.get(key);
    if (stop === undefined) {
      stop = AbortSignal.any([this.#closing.signal, this.#budgets.run.signal, ...(signal ? [signal] : [])]);
      // Each waiting task listens to it: many listeners are the design, not a leak.
      setMaxListeners(0, stop);
      this.#stops.set(key, stop);
    }
    return stop;
  }

  /** What stops a task or session that has not started: #stopOf, and the budgets over it beyond the run's. */
  #waitingOf(record: TaskRecord, signal: AbortSignal | undefined): AbortSignal {
    const stop = this.#stopOf(signal);
    const own = record.budgets.filter((b) => b !== this.#budgets.run).map((b) => b.signal);
    return own.length === 0 ? stop : AbortSignal.any([stop, ...own]);
  }

  /**
   * Runs `work` in a scheduler slot, which stays taken until the task's worker has been given back (a process that
   * exits is still a live process under the limit), while `work`'s result goes on at once.
   */
  #inSlotUntilGivenBack(record: TaskRecord, spec: TaskSpec, waiting: AbortSignal, work: () => Promise<TurnResult>): Promise<TurnResult> {
    return new Promise((resolve, reject) => {
      const job = async () => {
        try {
          resolve(await work());
        } catch (error) {
          reject(error);
        } finally {
          await record.givingBack;
          record.givingBack = undefined;
        }
      };
      this.scheduler.schedule(job, { key: spec.agent, priority: spec.priority, signal: waiting }).catch(reject);
    });
  }

  /** The agent of that name; throws for one the orchestrator does not know. */
  #agentSpec(name: string | undefined): AgentSpec | undefined {
    const agents = this.options.agents ?? {};
    const agent = name === undefined ? undefined : own(agents, name);
    if (name !== undefined && agent === undefined) throw new UnknownAgentError(name, Object.keys(agents));
    return agent;
  }

  /** `stopped`: a user's stop that came while the task waited to be admitted; it ends without starting. */
  async #execute(record: TaskRecord, spec: TaskSpec, lentSlot = false, admitted?: Admitted, stopped?: Error): Promise<TaskResult> {
    const stops = new TaskStops(record, this.#waitingOf(record, spec.signal), spec.timeoutMs ?? this.options.timeoutMs, () => admitted?.started());
    if (stopped) stops.stop(stopped);
    const forget = this.#running.add(
      record.info,
      (reason) => stops.stop(reason),
      () => this.#replyCounts.of(record.sessionId),
    );
    let turn: TurnResult | undefined;
    let error: unknown;
    try {
      turn = await retryWithBackoff(
        () =>
          this.#gate.try(record, stops, {
            startAhead: () => this.#startAhead(spec, record.overrides, record.budgets, this.scheduler.running),
            inSlot: (work) => (lentSlot ? work() : this.#inSlotUntilGivenBack(record, spec, stops.waiting, work)),
            attempt: (leasing) => this.#attempt(record, spec, stops.signal, leasing),
          }),
        {
          retries: spec.retries ?? this.options.retries ?? DEFAULT_RETRIES,
          isRetryable: (e) => stops.stopped === undefined && isRetryable(e, record.attemptMessages),
          // A task is retried only once it ran: its own stop covers the back-off.
          signal: stops.signal,
          onRetry: ({ error: e, attempt, delayMs }) =>
            this.#hub.emit({ type: "task_retry", task: record.info, attempt, delayMs, error: errorSummary(e) }),
        },
      );
    } catch (caught) {
      error = stops.reasonFor(caught);
    } finally {
      stops.release();
      forget();
      // Ended without starting (stopped while it waited, refused): the next task of its lane is admitted.
      admitted?.started();
    }
    const result = taskResult(record, turn, error, Date.now());
    this.#transcripts?.end(record.info.id);
    this.#statusCounts[result.status]++;
    this.#hub.emit({ type: "task_finished", task: record.info, result });
    return result;
  }

  /**
   * A process for a task that will ask for one (it waits for the access check, or prepare() said it is on its way),
   * started now as no task's, for whichever task of those settings asks first. Only on a core nothing else uses:
   * `busy` tasks (those counted as having a process) and the processes waiting in the pool leave room for none beyond
   * the cores and the concurrency. Not for a task whose process must be its own.
   */
  #startAhead(spec: TaskSpec, overrides: Partial<WorkerOptions>, budgets: Budget[], busy: number): boolean {
    if (this.#aheadRoom(busy) <= 0 || spec.prepareWorker || overrides.resume !== undefined) return false;
    if (this.#budgets.processLimitUsd(budgets) !== undefined) return false;
    let plan: WorkerPlan<TaskRecord>;
    try {
      plan = planAhead(
        this.#stagger,
        this.#factory.plan({ context: { kind: "task", name: spec.name ?? "ahead", agent: spec.agent }, overrides, postTasks: spec.postTasks }),
      );
    } catch {
      // Settings that cannot be planned (a workerOptions callback that throws) start nothing ahead; the task says why.
      return false;
    }
    return this.#pool.startAhead(plan.key, () => plan.start(this.#closing.signal));
  }

  /** How many more processes may start ahead: the cores, or the concurrency in force if lower (a rate limit lowers it), less `busy` tasks and the processes waiting in the pool. */
  #aheadRoom(busy: number): number {
    return Math.min((this.options.machine ?? LOCAL_MACHINE).cores(), this.scheduler.rateLimit.effectiveLimit) - busy - this.#pool.waitingProcesses;
  }

  /** `leasing`: called as the attempt asks the pool for its process. */
  async #attempt(record: TaskRecord, spec: TaskSpec, signal: AbortSignal, leasing?: () => void): Promise<TurnResult> {
    record.attempts++;
    record.attemptMessages = [];
    if (spec.prepareWorker && !record.prepared) {
      record.prepared = true;
      record.overrides = { ...record.overrides, ...(await spec.prepareWorker(signal)) };
    }
    // Per attempt: the CLI counts cost per session, and a reused process starts a new session for each task.
    const cost = new WorkerCost(this.#prices);
    const { info } = record;
    // The attempt holds a slot from here; task_started follows once its process is up.
    this.#hub.emit({ type: "worker_state", task: info, state: "starting" });
    const plan = this.#factory.plan({
      context: { kind: "task", name: info.name, agent: info.agent },
      overrides: record.overrides,
      record,
      postTasks: spec.postTasks,
    });
    this.#replies?.prompt(info.id, spec.prompt);
    const { ticket, hidePartial, acquire } = this.#leases.lease(record, plan);
    // From its lease, the process counts among those at work under its budgets: the next one's share reserves for it.
    const leave = this.#budgets.atWork(record.budgets);
    try {
      const turn = await runAttempt({
        acquire: (stop, fresh) => {
          // The lease claims a waiting process before it returns: one started ahead after this is not the probe's.
          const lease = acquire(stop, fresh);
          leasing?.();
          return lease;
        },
        prompt: spec.prompt,
        verbatim: spec.verbatim,
        signal,
        idleTimeoutMs: spec.idleTimeoutMs ?? this.options.idleTimeoutMs,
        beforeSend: ticket && ((stop) => ticket.ready(stop)),
        onStarted: (worker, origin) => this.#taskStarted(record, worker, origin),
        onGivingBack: (done) => {
          record.givingBack = done.catch(() => undefined);
        },
        onMessage: (message) => {
          ticket?.observe(message);
          if (hidePartial && message.type === "stream_event") return;
          record.attemptMessages.push(message);
          const charge = cost.observe(message);
          if (charge && message.type === "assistant") for (const budget of record.budgets) budget.noteCall(charge.usd);
          this.#onWorkerMessage(record, message, charge);
        },
      });
      this.#throwIfFailed(record, turn);
      this.scheduler.reportSuccess();
      this.#leases.succeeded(turn);
      // Still in its slot: the next task of the agent is judged with this one's cost known.
      this.#budgets.finished(record.info.agent, record.costUsd);
      return turn;
    } finally {
      leave();
      ticket?.release();
    }
  }

  /** The attempt's process is up: task_started, and its worker's events relayed (returns what stops relaying them). */
  #taskStarted(record: TaskRecord, worker: Worker, origin: WorkerOrigin): () => void {
    this.#hub.emit({
      type: "task_started",
      task: record.info,
      attempt: record.attempts,
      pid: worker.pid,
      worker: origin,
      startedAt: record.startedAt ?? Date.now(),
    });
    const detach = this.#running.attach(record.info.id, worker);
    const unrelay = this.#relayWorkerEvents(worker, record);
    return () => {
      detach();
      unrelay();
    };
  }

  /** A turn that ended without what the task asked: its budget spent, an error, or no structured output where one was due. */
  #throwIfFailed(record: TaskRecord, turn: TurnResult): void {
    const expectsStructuredOutput =
      layerWorkerOptions({ defaults: this.options.defaults, agent: record.agent, task: record.overrides }).jsonSchema !== undefined;
    if (turn.subtype === "error_max_budget_usd") throw this.#spentBudget(record.budgets);
    const failure = turnFailure(turn, expectsStructuredOutput);
    if (failure) throw failure;
  }

  /** A message from the worker of a task or session: transcript, event, rate limits and, with a result, its cost. */
  #onWorkerMessage(record: TaskRecord, message: CliMessage, charge: Charge | undefined): void {
    this.#transcripts?.write(record.info.id, record.info.name, message);
    this.#replies?.message(record.info.id, record.info.name, message);
    record.sessionId = sessionIdOf(message) ?? record.sessionId;
    this.#replyCounts.observe(message);
    this.#running.observe(record.info.id, message);
    this.#hub.emit({ type: "task_message", task: record.info, message });
    this.#access.observe(message);
    this.#watchRateLimits(message);
    if (charge) this.#charge(record, charge.usd, charge.usage);
  }

  #watchRateLimits(message: CliMessage): void {
    this.#plan.observe(message);
    if (message.type === "system" && message.subtype === "api_retry" && isRateLimitStatus(message.error_status)) {
      this.scheduler.reportRateLimited({ retryAfterMs: message.retry_delay_ms });
    } else if (message.type === "rate_limit_event" && message.rate_limit_info.status === "rejected") {
      const resetsAt = message.rate_limit_info.resetsAt;
      this.scheduler.reportRateLimited(resetsAt ? { retryAfterMs: Math.max(0, resetsAt * 1000 - Date.now()) } : {});
    } else if (message.type === "result" && isRateLimitStatus(message.api_error_status)) {
      this.scheduler.reportRateLimited();
    }
  }

  /** The budget the CLI's own limit stood for: the first of the list that is spent, else the tightest. */
  #spentBudget(budgets: readonly Budget[]): BudgetExceededError {
    const spent = budgets.find((b) => b.exceeded);
    if (spent) return spent.error();
    const tightest = budgets.filter((b) => b.remainingUsd !== undefined).sort((a, b) => (a.remainingUsd ?? 0) - (b.remainingUsd ?? 0))[0];
    return (tightest ?? this.#budgets.run).error();
  }

  /**
   * Adds a cost to a task or a session record (the run's alone when neither) and to the budgets over it;
   * stops what a budget covers when this reached it.
   */
  #charge(
    record: TaskRecord | SessionRecord | undefined,
    usd: number,
    usage: Record<string, unknown> | undefined,
    budgets?: readonly Budget[],
  ): void {
    const added = emptyUsage();
    addUsage(added, usage);
    addUsage(this.#totalUsage, usage);
    if (record) {
      record.costUsd += usd;
      addUsage(record.usage, usage);
    }
    const charged = budgets ?? (record && "info" in record ? record.budgets : [this.#budgets.run]);
    const reached = this.#budgets.charge(charged, usd, added);
    if (record && "info" in record) {
      const uses = this.#budgets.status(charged.filter((b) => b !== this.#budgets.run));
      this.#hub.emit({
        type: "cost",
        task: record.info,
        taskUsd: record.costUsd,
        totalUsd: this.#budgets.run.spentUsd,
        totalUsage: { ...this.#totalUsage },
        ...(uses.length > 0 && { budgets: uses }),
      });
    }
    for (const error of reached) this.#stopForBudget(error);
  }

  /** A budget is reached (by a charge here or, with a shared ledger, elsewhere): its signal already stops what it covers. */
  #stopForBudget(reached: BudgetExceededError): void {
    this.#hub.emit({ type: "budget_exceeded", spentUsd: reached.spentUsd, budgetUsd: reached.budgetUsd, scope: reached.scope });
  }

  /** The worker of a peer or supervisor session, with its own record and transcript; it works for many tasks, so its cost is its own. */
  async #startSessionWorker(
    kind: SessionKind,
    agent: string,
    chain: () => readonly string[],
    asker: string | undefined,
    askerNow: () => string | undefined,
  ): Promise<Worker> {
    const plan = this.#factory.plan({ context: { kind, name: agent, agent }, overrides: undefined, chain });
    const { worker } = await plan.start(undefined);
    const record = this.#records.openAgentSession(kind, agent, asker);
    const cost = new WorkerCost(this.#prices);
    worker.on((event) => {
      if (event.type !== "message") return;
      const { message } = event;
      this.#transcripts?.write(record.id, record.name, message);
      this.#replies?.message(record.id, record.name, message);
      record.sessionId = sessionIdOf(message) ?? record.sessionId;
      this.#watchRateLimits(message);
      if (message.type === "assistant") {
        const streamed = cost.stream(message);
        if (streamed) this.#charge(record, streamed.usd, undefined, this.#budgets.applying(agent));
      }
      if (message.type !== "result") return;
      record.numTurns += message.num_turns ?? 0;
      const { usd, usage: added, turnUsd } = cost.add(message);
      this.#charge(record, usd, added, this.#budgets.applying(agent));
      const usage = emptyUsage();
      addUsage(usage, added);
      const finishedAt = Date.now();
      this.#hub.emit({
        type: "agent_turn",
        kind,
        agent,
        asker: askerNow(),
        startedAt: finishedAt - (message.duration_ms ?? 0),
        turn: {
          sessionId: message.session_id ?? "",
          isError: message.is_error === true,
          costUsd: turnUsd ?? usd,
          usage,
          numTurns: message.num_turns ?? 0,
          finishedAt,
        },
      });
    });
    return worker;
  }

  #spawnChild(parent: TaskRecord | undefined, prompt: string, agent: string | undefined, signal: AbortSignal): Promise<TaskResult> {
    if (parent && parent.depth + 1 > MAX_SPAWN_DEPTH) {
      return Promise.reject(new InvalidTaskError(`workers may spawn workers only ${MAX_SPAWN_DEPTH} levels deep`));
    }
    const name = `${parent?.info.name ?? "session"}/child`;
    // A model wrote the prompt: it is text, never a file read or a command.
    const spec: TaskSpec = { name, prompt, verbatim: true, agent, signal };
    const record = this.#createRecord(spec, parent);
    let result: TaskResult | undefined;
    this.#records.addChild(record, parent?.info.name, () => result);
    // The parent waits on its child: the child runs in the parent's slot, so a full pool cannot deadlock.
    return this.#execute(record, spec, parent !== undefined).then((settled) => {
      result = settled;
      return settled;
    });
  }

  /** A task's or session's worker state, permission requests and background tasks, as the orchestrator's events; returns the unsubscribe function. */
  #relayWorkerEvents(worker: Worker, record: TaskRecord): () => void {
    const { info } = record;
    return worker.on((event) => {
      if (event.type === "background_task") {
        record.backgroundTasks.set(event.task.id, event.task);
        this.#hub.emit({ type: "background_task", task: info, background: event.task });
      } else if (event.type === "state") this.#hub.emit({ type: "worker_state", task: info, state: event.state });
      else if (event.type === "permission_request")
        this.#hub.emit({ type: "permission_request", task: info, requestId: event.requestId, request: event.request });
      else if (event.type === "permission_settled") this.#hub.emit({ type: "permission_settled", task: info, requestId: event.requestId });
    });
  }

  #track(worker: Worker): void {
    this.#liveWorkers.add(worker);
    void worker.exited.then(() => this.#liveWorkers.delete(worker));
  }
}

function combine(a: AbortSignal | undefined, b: AbortSignal): AbortSignal {
  return a ? AbortSignal.any([a, b]) : b;
}
