// The processes that outlive a task: spares started ahead of time and finished tasks' processes kept for reuse.
import type { CliMessage } from "../protocol/index.ts";
import { resetConversation, type Worker } from "../worker/index.ts";
import { whyNotReusable, whyResetLeftState } from "./reuse-verdict.ts";
import type { TaskInfo, WorkerOrigin } from "./types.ts";
import type { BoundWorker } from "./worker-binding.ts";
import type { WorkerPlan } from "./worker-factory.ts";

export interface WorkerPoolOptions<R extends { info: TaskInfo }> {
  /** Reused processes kept idle at most (spares aside): the orchestrator's concurrency. */
  maxIdle(): number;
  /** Whether work waits for a process now: a finished one is then reset at once, else only once taken. */
  workWaiting(): boolean;
  /** An idle reused process is closed after this long. Default 60 s. */
  idleTimeoutMs?: number;
  /** What a reset cost (nothing on the pinned CLI): the run's, never a task's. */
  onResetCost(costUsd: number, usage: Record<string, unknown> | undefined): void;
  /** A process was closed instead of being kept for the next task: why, and whom it worked for last. */
  onRecycled(bound: BoundWorker<R>, task: TaskInfo | undefined, reason: string): void;
}

/** A process for one piece of work, given back when the work is done. */
export interface Lease {
  worker: Worker;
  origin: WorkerOrigin;
  /** `messages`: the work's turn, when it ended cleanly; undefined when it did not (the process is closed). */
  release(messages: readonly CliMessage[] | undefined): Promise<void>;
}

/** A process that is ready for work of `key`, or soon will be (a spare starting, a reused one resetting). */
interface Entry<R extends { info: TaskInfo }> {
  key: string;
  /** A process that has served no work yet: a spare, or one started ahead (startAhead). Any work of its key may take it. */
  spare: boolean;
  /** A spare's line, which replaces it once it is taken; none for a process started ahead. */
  line?: SpareLine<R>;
  /** Set once the process is up. */
  bound?: BoundWorker<R>;
  /** True while it starts or resets. */
  pending: boolean;
  /** A finished process not reset yet (no work was waiting for it): it is, once taken. Its last task's info. */
  resetWhenTaken?: { task: TaskInfo | undefined };
  /** The process once ready for work; undefined when it was closed instead. */
  ready: Promise<BoundWorker<R> | undefined>;
  /** Taken by work that waits for it to be ready. */
  claimed: boolean;
  idleTimer?: ReturnType<typeof setTimeout>;
}

interface SpareLine<R extends { info: TaskInfo }> {
  want: number;
  /** Spares idle or starting. */
  have: number;
  start(): Promise<BoundWorker<R>>;
  /** Starts that failed in a row; replacing stops at MAX_SPARE_FAILURES. */
  failures: number;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
const MAX_SPARE_FAILURES = 3;
/** The longest a taken spare's replacement waits for the taker's first turn to end. */
const REPLACE_AFTER_MS = 10_000;

/**
 * A spare builds its system prompt and tool list ahead of its first prompt:
 * the CLI does that lazily, on the first prompt or a context-usage question,
 * and keeps it. Asked in "summary" detail, it makes no API request and leaves
 * the conversation empty. A CLI that does not know the question, or a process
 * that died meanwhile, leaves the spare as it was (a dead one is replaced).
 */
async function primed<R extends { info: TaskInfo }>(bound: BoundWorker<R>): Promise<BoundWorker<R>> {
  await bound.worker.contextUsage().catch(() => undefined);
  return bound;
}

/**
 * Processes waiting for work: spares started ahead of demand (prewarm), and
 * the processes of finished tasks kept for the next task of the same
 * settings (reuse), each reset to a new session first. A process that
 * misbehaves is closed and its work goes to a new one.
 */
export class WorkerPool<R extends { info: TaskInfo }> {
  readonly #options: WorkerPoolOptions<R>;
  readonly #entries: Entry<R>[] = [];
  readonly #spares = new Map<string, SpareLine<R>>();
  #closed = false;

  constructor(options: WorkerPoolOptions<R>) {
    this.#options = options;
  }

  /**
   * Keeps `count` more spares of a plan's key; resolves once they are up.
   * Rejects with the start's error when not one could be started.
   */
  async prewarm(key: string, count: number, start: () => Promise<BoundWorker<R>>): Promise<void> {
    const line = this.#spares.get(key) ?? { want: 0, have: 0, start, failures: 0 };
    line.want += count;
    this.#spares.set(key, line);
    const failures = await Promise.all(Array.from({ length: Math.max(0, line.want - line.have) }, () => this.#startSpare(key, line)));
    const failure = failures.find((error) => error !== undefined);
    if (failure !== undefined && line.have === 0) throw failure;
  }

  /** Processes waiting for work, or starting or resetting for it, that no work has claimed yet. */
  get waitingProcesses(): number {
    return this.#entries.filter((entry) => !entry.claimed).length;
  }

  /**
   * Starts one process of `key` for work that is about to ask for it (a task
   * waiting for the access check, or one a stage before it will start): kept
   * as a spare, but not replaced once taken, and closed when left idle as a
   * reused one is. False when the pool is closed.
   */
  startAhead(key: string, start: () => Promise<BoundWorker<R>>): boolean {
    if (this.#closed) return false;
    const started = start().then(primed);
    const entry: Entry<R> = { key, spare: true, pending: true, claimed: false, ready: started.catch(() => undefined) };
    this.#entries.push(entry);
    void started.then(
      (bound) => {
        Object.assign(entry, { bound, pending: false });
        void bound.worker.exited.then(() => this.#remove(entry));
        if (this.#closed) void bound.worker.close();
        else if (!entry.claimed) this.#idleUntilDropped(entry);
      },
      () => this.#remove(entry),
    );
    return true;
  }

  /**
   * A process for one task or session: a waiting one of the plan's key when
   * there is one (a reused one only with `maxTasks` over 1), else a new one.
   * `fresh` skips waiting ones (after one failed at once).
   */
  async lease(plan: WorkerPlan<R>, options: { maxTasks: number; signal: AbortSignal | undefined; fresh?: boolean }): Promise<Lease> {
    const reuse = options.maxTasks > 1;
    const taken = options.fresh ? undefined : await this.#take(plan.key, reuse);
    if (taken) plan.adopt(taken.bound);
    else if (reuse) this.#makeRoom(plan.key);
    const bound = taken?.bound ?? (await plan.start(options.signal));
    return {
      worker: bound.worker,
      origin: taken ? (taken.spare ? "spare" : "reused") : "cold",
      release: async (messages) => {
        if (!reuse || this.#closed) return void (await bound.worker.close());
        const reason =
          messages === undefined
            ? "the task did not end cleanly"
            : bound.served >= options.maxTasks
              ? `it has served ${bound.served} tasks, the most per process`
              : whyNotReusable(messages, {
                  grantedPermissions: bound.binding.grantedPermissions,
                  externalMcpServers: bound.externalMcpServers,
                  runningBackgroundTasks: bound.worker.runningBackgroundTasks,
                });
        if (reason !== undefined) return this.#recycle(bound, reason);
        this.#keep(bound);
      },
    };
  }

  /** Closes every waiting process, those still starting or resetting included. */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = this.#entries.splice(0);
    for (const entry of entries) clearTimeout(entry.idleTimer);
    await Promise.all(entries.map(async (entry) => (await entry.ready)?.worker.close()));
  }

  async #take(key: string, reuse: boolean): Promise<{ bound: BoundWorker<R>; spare: boolean } | undefined> {
    const fits = this.#entries.filter((e) => e.key === key && !e.claimed && (reuse || e.spare));
    // Ready before pending, reused before spares (a spare is kept for work that cannot reuse). A
    // pending one is still worth the wait: it is further along than a start begun now.
    const entry = fits.find((e) => !e.pending && !e.spare) ?? fits.find((e) => !e.pending) ?? fits.find((e) => !e.spare) ?? fits[0];
    if (!entry) return undefined;
    entry.claimed = true;
    // Taken: no longer idle (a timer firing during the reset below would close the process under it).
    clearTimeout(entry.idleTimer);
    if (entry.resetWhenTaken) this.#startReset(entry, entry.resetWhenTaken.task);
    const bound = await entry.ready;
    this.#remove(entry);
    if (entry.line) this.#replaceSpare(key, entry.line, bound?.worker);
    // A process that died while it waited is not handed out; the work gets a new one.
    const live = bound && bound.worker.state === (entry.spare ? "ready" : "idle");
    return live ? { bound, spare: entry.spare } : undefined;
  }

  /** Before a start for `key`: the longest-idle reused process of other settings goes, so processes stay within the limit. */
  #makeRoom(key: string): void {
    const other = this.#entries.find((e) => !e.spare && !e.claimed && !e.pending && e.key !== key);
    if (other) this.#drop(other, "a task of other settings needed a process");
  }

  /**
   * A finished process waits for the next task of its key, reset to a new session: at once when work is waiting,
   * else once taken, so that a process nobody takes (the end of a run, a stage of other settings next) spends
   * nothing on a reset, and closes at once.
   */
  #keep(bound: BoundWorker<R>): void {
    const task = bound.binding.record?.info;
    bound.unbind();
    const entry: Entry<R> = { key: bound.key, spare: false, bound, pending: false, claimed: false, ready: Promise.resolve(bound) };
    this.#entries.push(entry);
    void bound.worker.exited.then(() => this.#remove(entry));
    if (this.#options.workWaiting()) this.#startReset(entry, task);
    else {
      entry.resetWhenTaken = { task };
      this.#idleUntilDropped(entry);
    }
    const reused = this.#entries.filter((e) => !e.spare && !e.claimed);
    const oldest = reused.find((e) => !e.pending);
    if (reused.length > this.#options.maxIdle() && oldest) this.#drop(oldest, "more processes idle than the concurrency");
  }

  #startReset(entry: Entry<R>, task: TaskInfo | undefined): void {
    entry.resetWhenTaken = undefined;
    entry.pending = true;
    entry.ready = this.#reset(entry, entry.bound!, task);
  }

  async #reset(entry: Entry<R>, bound: BoundWorker<R>, task: TaskInfo | undefined): Promise<BoundWorker<R> | undefined> {
    let reason: string | undefined;
    try {
      const reset = await resetConversation(bound.worker);
      const cost = reset.result.total_cost_usd;
      this.#options.onResetCost(typeof cost === "number" ? cost : 0, reset.result.usage);
      reason = whyResetLeftState(reset, bound.baseline);
    } catch (error) {
      reason = (error as Error).message;
    }
    entry.pending = false;
    if (reason === undefined && !this.#closed && this.#entries.includes(entry)) {
      if (!entry.claimed) this.#idleUntilDropped(entry);
      return bound;
    }
    this.#remove(entry);
    if (this.#closed) await bound.worker.close();
    else await this.#recycle(bound, reason ?? "it was dropped while it was reset", task);
    return undefined;
  }

  /** A waiting process no work takes within the idle timeout is closed. */
  #idleUntilDropped(entry: Entry<R>): void {
    const idleMs = this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    entry.idleTimer = setTimeout(() => this.#drop(entry, `idle for ${Math.round(idleMs / 1000)} s`), idleMs);
    entry.idleTimer.unref?.();
  }

  #drop(entry: Entry<R>, reason: string): void {
    this.#remove(entry);
    if (entry.bound) void this.#recycle(entry.bound, reason);
  }

  async #recycle(bound: BoundWorker<R>, reason: string, task = bound.binding.record?.info): Promise<void> {
    this.#options.onRecycled(bound, task, reason);
    await bound.worker.close();
  }

  #remove(entry: Entry<R>): void {
    clearTimeout(entry.idleTimer);
    const index = this.#entries.indexOf(entry);
    if (index >= 0) this.#entries.splice(index, 1);
  }

  /**
   * A spare was taken: its replacement starts once the taken process has
   * answered its first turn (or after REPLACE_AFTER_MS), so that the start
   * does not compete with that turn for the CPU.
   */
  #replaceSpare(key: string, line: SpareLine<R>, taken: Worker | undefined): void {
    line.have--;
    if (!taken) return void this.#startSpare(key, line);
    let replaced = false;
    const replace = () => {
      if (replaced) return;
      replaced = true;
      off();
      clearTimeout(timer);
      void this.#startSpare(key, line);
    };
    const off = taken.on((event) => event.type === "message" && event.message.type === "result" && replace());
    const timer = setTimeout(replace, REPLACE_AFTER_MS);
    timer.unref?.();
    void taken.exited.then(replace);
  }

  /** Starts a spare if the line wants one; resolves with the error that made it give up, if any. */
  async #startSpare(key: string, line: SpareLine<R>): Promise<unknown> {
    if (this.#closed || line.have >= line.want || line.failures >= MAX_SPARE_FAILURES) return undefined;
    line.have++;
    const started = line.start().then(primed);
    const entry: Entry<R> = { key, spare: true, line, pending: true, claimed: false, ready: started.catch(() => undefined) };
    this.#entries.push(entry);
    let bound: BoundWorker<R>;
    try {
      bound = await started;
    } catch (error) {
      this.#remove(entry);
      // A claimed spare that failed was already counted out (#replaceSpare).
      if (!entry.claimed) line.have--;
      line.failures++;
      return line.failures >= MAX_SPARE_FAILURES || this.#closed ? error : this.#startSpare(key, line);
    }
    Object.assign(entry, { bound, pending: false });
    line.failures = 0;
    if (this.#closed) await bound.worker.close();
    void bound.worker.exited.then(() => {
      if (!this.#entries.includes(entry) || entry.claimed) return;
      // A spare that died while waiting is replaced, up to the limit of failures in a row.
      this.#remove(entry);
      line.have--;
      line.failures++;
      void this.#startSpare(key, line);
    });
    return undefined;
  }
}
