// The Scheduler: jobs run under a global and per-key concurrency limit, by priority, with rate-limit back-off.
import PQueue from "p-queue";
import { AbortError } from "../../errors.ts";
import { EventHub, type Listener } from "../../util/event-hub.ts";
import { AdaptiveLimit, type AdaptiveLimitOptions, type RateLimitState } from "./adaptive-limit.ts";
import { QueueClearedError, requireLimit, SchedulerOptionError } from "./errors.ts";

export interface SchedulerOptions {
  /** Jobs running at once, across all keys. */
  concurrency: number;
  /** Jobs running at once per key (an agent name), e.g. `{ reviewer: 2 }`. Other keys are bound only by `concurrency`. */
  keyLimits?: Readonly<Record<string, number>>;
  rateLimit?: AdaptiveLimitOptions;
}

export interface ScheduleOptions {
  key?: string;
  /** Higher starts first among waiting jobs; equal priorities start in scheduling order. Default 0. */
  priority?: number;
  /** Aborting removes a waiting job (it rejects with an AbortError); a running job receives it and must stop itself. */
  signal?: AbortSignal;
}

export type SchedulerEvent =
  | { type: "rate_limit"; state: RateLimitState }
  | { type: "job_started"; key: string | undefined }
  | { type: "job_finished"; key: string | undefined };

export type SchedulerListener = Listener<SchedulerEvent>;

export interface KeyCounts {
  running: number;
  waiting: number;
}

export interface SchedulerCounts extends KeyCounts {
  byKey: Record<string, KeyCounts>;
}

/**
 * Where a job is: waiting in its key's queue for a key slot, holding a key slot
 * while waiting in the global queue, running, or settled.
 */
type Phase = "key" | "global" | "running" | "done";

interface Entry {
  readonly key: string | undefined;
  readonly priority: number;
  readonly seq: number;
  phase: Phase;
  /** Aborted only while the job waits, to take it out of the queues (p-queue would free a running job's slot). */
  queued: AbortController;
  readonly run: () => Promise<void>;
  readonly fail: (error: unknown) => void;
}

/** Reason for taking a job out of the global queue to hand its key slot to a higher-priority job. */
const PREEMPTED = Symbol("preempted");

/**
 * Jobs settle through `Entry.run` / `Entry.fail`; the p-queue promises only
 * reject when this class aborts a waiting job's queue signal, already handled.
 */
const settledThroughEntry = (): void => {};

/**
 * Runs async jobs under a global limit, per-key limits and priorities, and
 * adapts the global limit to rate limits.
 *
 * Layering on p-queue: a key with a limit has its own p-queue (concurrency =
 * the key limit) whose tasks forward the job into the global p-queue
 * (concurrency = the effective limit). A job beyond its key's limit waits in
 * the key queue and takes no global slot, so other keys' jobs pass it. A key
 * slot is held from forwarding until the job ends; when a higher-priority job
 * of the same key arrives while that key's slots are held by jobs still waiting
 * for a global slot, the lowest of those goes back to the key queue and gives
 * up its slot, so priorities also hold within a key.
 */
export class Scheduler {
  readonly #global: PQueue;
  readonly #keyQueues = new Map<string, PQueue>();
  readonly #adaptive: AdaptiveLimit;
  /** Every job not yet settled, by key. */
  readonly #entries = new Map<string | undefined, Set<Entry>>();
  /** The jobs of each limited key that hold a key slot and wait for a global one: what a higher-priority job may preempt. */
  readonly #holdingKeySlot = new Map<string, Set<Entry>>();
  readonly #events = new EventHub<SchedulerEvent>();
  #idleWaiters: Array<() => void> = [];
  #seq = 0;
  #total = 0;
  #running = 0;
  #peakRunning = 0;
  #paused = false;
  #backoffTimer: ReturnType<typeof setTimeout> | undefined;
  #published: RateLimitState;

  /** The one check of the limits (the Orchestrator's `concurrency` and `agentLimits` included); inside they are trusted. */
  constructor(options: SchedulerOptions) {
    const concurrency = requireLimit("concurrency", options.concurrency);
    this.#adaptive = new AdaptiveLimit(concurrency, options.rateLimit);
    this.#global = new PQueue({ concurrency });
    for (const [key, limit] of Object.entries(options.keyLimits ?? {})) {
      this.#keyQueues.set(key, new PQueue({ concurrency: requireLimit(`keyLimits.${key}`, limit) }));
    }
    this.#published = this.rateLimit;
  }

  schedule<T>(job: (signal: AbortSignal) => Promise<T>, options: ScheduleOptions = {}): Promise<T> {
    const { key, priority = 0, signal } = options;
    if (!Number.isFinite(priority)) {
      return Promise.reject(new SchedulerOptionError("priority", "a finite number", priority));
    }
    if (signal?.aborted) return Promise.reject(new AbortError("the scheduled job", signal.reason));
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => this.#cancel(entry, new AbortError("the queued job", signal?.reason));
      const entry: Entry = {
        key,
        priority,
        seq: this.#seq++,
        phase: "key",
        queued: new AbortController(),
        run: async () => {
          signal?.removeEventListener("abort", onAbort);
          this.#started(entry);
          try {
            resolve(await job(signal ?? new AbortController().signal));
          } catch (error) {
            reject(error);
          } finally {
            this.#finished(entry);
          }
        },
        fail: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#track(entry);
      this.#enqueue(entry);
      this.#preemptFor(entry);
    });
  }

  /** Stop starting jobs (running ones go on). */
  pause(): void {
    this.#paused = true;
    this.#gate();
  }

  resume(): void {
    this.#paused = false;
    this.#gate();
  }

  get isPaused(): boolean {
    return this.#paused;
  }

  /** Reject every waiting job with a QueueClearedError; running jobs go on. */
  clear(): void {
    const entries = [...this.#entries.values()].flatMap((set) => [...set]);
    for (const entry of entries) this.#cancel(entry, new QueueClearedError());
  }

  /** Resolves once nothing waits and nothing runs. */
  onIdle(): Promise<void> {
    if (this.#total === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#total - this.#running;
  }

  /** The limits in force now, as `rate_limit` events publish them on each change. */
  get rateLimit(): RateLimitState {
    return this.#adaptive.state(Date.now());
  }

  /** The most jobs that ever ran at once. */
  get peakRunning(): number {
    return this.#peakRunning;
  }

  counts(): SchedulerCounts {
    const byKey: Record<string, KeyCounts> = {};
    for (const [key, entries] of this.#entries) {
      if (key === undefined) continue;
      let running = 0;
      for (const entry of entries) if (entry.phase === "running") running += 1;
      byKey[key] = { running, waiting: entries.size - running };
    }
    return { running: this.running, waiting: this.waiting, byKey };
  }

  /** A new global limit, e.g. from auto sizing: a higher one starts waiting jobs at once, a lower one only stops new starts. */
  resize(concurrency: number): void {
    if (concurrency === this.#adaptive.limit) return;
    this.#adaptive.resize(requireLimit("concurrency", concurrency));
    this.#gate();
  }

  /** A job hit a rate limit: lower the effective limit and back off before the next start. */
  reportRateLimited(options: { retryAfterMs?: number } = {}): void {
    this.#adaptive.rateLimited(Date.now(), options.retryAfterMs);
    this.#gate();
  }

  /** A job finished without a rate limit: raise the effective limit a step, up to the configured limit. */
  reportSuccess(): void {
    this.#adaptive.succeeded(Date.now());
    this.#gate();
  }

  /** Returns a function that removes the listener. */
  onEvent(listener: SchedulerListener): () => void {
    return this.#events.on(listener);
  }

  #enqueue(entry: Entry): void {
    const signal = entry.queued.signal;
    const forward = (): Promise<void> => {
      this.#setPhase(entry, "global");
      return this.#global.add(entry.run, { priority: entry.priority, signal });
    };
    const keyQueue = entry.key === undefined ? undefined : this.#keyQueues.get(entry.key);
    if (keyQueue === undefined) {
      forward().catch(settledThroughEntry);
      return;
    }
    this.#setPhase(entry, "key");
    keyQueue.add(forward, { priority: entry.priority, signal, id: String(entry.seq) }).catch(settledThroughEntry);
  }

  /** See the class comment: a new job still waiting for a key slot may take one from a lower-priority job of its key. */
  #preemptFor(entry: Entry): void {
    if (entry.phase !== "key" || entry.key === undefined) return;
    const keyQueue = this.#keyQueues.get(entry.key);
    const peers = this.#entries.get(entry.key);
    if (keyQueue === undefined || peers === undefined) return;
    let victim: Entry | undefined;
    // Only the jobs holding a key slot (at most the key's limit), not every job of the key: a fan-out of one agent stays linear.
    for (const peer of this.#holdingKeySlot.get(entry.key) ?? []) {
      if (!victim || peer.priority < victim.priority || (peer.priority === victim.priority && peer.seq > victim.seq)) {
        victim = peer;
      }
    }
    if (victim === undefined || victim.priority >= entry.priority) return;
    // The abort drops the victim from the global queue and ends its key task; p-queue frees the
    // key slot a microtask later and gives it to the highest waiting job, which is `entry`.
    victim.queued.abort(PREEMPTED);
    victim.queued = new AbortController();
    this.#enqueue(victim);
    // Re-queued, the victim lands behind its equals; moving the later ones behind it keeps their order.
    const later = [...peers]
      .filter((peer) => peer.phase === "key" && peer.priority === victim.priority && peer.seq > victim.seq)
      .sort((a, b) => a.seq - b.seq);
    for (const peer of later) keyQueue.setPriority(String(peer.seq), peer.priority);
  }

  #cancel(entry: Entry, error: unknown): void {
    if (entry.phase === "running" || entry.phase === "done") return;
    this.#setPhase(entry, "done");
    entry.queued.abort(error);
    this.#untrack(entry);
    entry.fail(error);
  }

  #started(entry: Entry): void {
    this.#setPhase(entry, "running");
    this.#running += 1;
    this.#peakRunning = Math.max(this.#peakRunning, this.#running);
    this.#events.emit({ type: "job_started", key: entry.key });
  }

  #finished(entry: Entry): void {
    this.#setPhase(entry, "done");
    this.#running -= 1;
    this.#untrack(entry);
    this.#events.emit({ type: "job_finished", key: entry.key });
  }

  #setPhase(entry: Entry, phase: Phase): void {
    if (entry.key !== undefined && this.#keyQueues.has(entry.key)) {
      let holding = this.#holdingKeySlot.get(entry.key);
      if (phase === "global") {
        if (holding === undefined) {
          holding = new Set();
          this.#holdingKeySlot.set(entry.key, holding);
        }
        holding.add(entry);
      } else if (holding?.delete(entry) && holding.size === 0) {
        this.#holdingKeySlot.delete(entry.key);
      }
    }
    entry.phase = phase;
  }

  #track(entry: Entry): void {
    let entries = this.#entries.get(entry.key);
    if (entries === undefined) {
      entries = new Set();
      this.#entries.set(entry.key, entries);
    }
    entries.add(entry);
    this.#total += 1;
  }

  #untrack(entry: Entry): void {
    const entries = this.#entries.get(entry.key);
    if (!entries?.delete(entry)) return;
    if (entries.size === 0) this.#entries.delete(entry.key);
    this.#total -= 1;
    if (this.#total > 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Apply pause, back-off and the effective limit to the global queue, and publish any change. */
  #gate(): void {
    const now = Date.now();
    const state = this.#adaptive.state(now);
    const blocked = this.#paused || state.backoffUntil !== null;
    if (blocked) this.#global.pause();
    // Lowering only stops new starts; p-queue never interrupts running jobs.
    this.#global.concurrency = state.effectiveLimit;
    if (!blocked) this.#global.start();

    clearTimeout(this.#backoffTimer);
    this.#backoffTimer = undefined;
    if (state.backoffUntil !== null) {
      this.#backoffTimer = setTimeout(() => {
        this.#backoffTimer = undefined;
        this.#gate();
      }, state.backoffUntil - now);
    }

    const last = this.#published;
    this.#published = state;
    // A limit resized while nothing is rate limited (auto sizing) is not rate-limit news.
    const limitMoved = (state.rateLimited || last.rateLimited) && last.effectiveLimit !== state.effectiveLimit;
    if (limitMoved || last.backoffUntil !== state.backoffUntil || last.rateLimited !== state.rateLimited) {
      this.#events.emit({ type: "rate_limit", state });
    }
  }
}
