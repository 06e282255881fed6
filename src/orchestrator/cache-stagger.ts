// Staggered first requests per prompt-prefix group, so a fan-out writes its shared prefix to the cache once.
import { type CliMessage, PROMPT_CACHE_TTL_MS } from "../protocol/index.ts";
import { promptPrefixKey, type WorkerOptions } from "../worker/index.ts";
import type { TaskInfo } from "./types.ts";
import type { WorkerPlan } from "./worker-factory.ts";

/**
 * Staggered first requests per prefix group. Workers whose requests start
 * with the same prefix (same promptPrefixKey) form a group. The API makes a
 * cached prefix readable only once the response that wrote it has begun, so
 * in a group whose prefix is not cached the first worker ready to send, its
 * leader, sends its first prompt at once; the others start and initialize
 * meanwhile and send theirs when the leader's response begins, or
 * `maxWaitMs` after the leader's request went out if it has not. They then
 * read the prefix (0.1× the input price)
 * instead of each writing it (1.25×). The leader is the first one ready, not
 * the first one started: on a busy machine workers finish starting in any
 * order, and none should wait for a slower one to start.
 *
 * A group stays warm for the cache's lifetime after each response of one of
 * its workers began (5 minutes, 1 hour once a response reports a 1-hour
 * write), so later workers do not wait. A leader that fails before its
 * response begins passes the lead to the first worker waiting. A group whose
 * leader's response reports no caching at all never waits again.
 */

export interface CacheStaggerOptions {
  /** How long a worker waits for its leader's response to begin, from the leader's request. Default 5 s. */
  maxWaitMs?: number;
  /**
   * How long a worker waits for its leader's request to go out at all.
   * Default 30 s: a CLI takes seconds from prompt to request on a busy
   * machine (measured: 2 to 16 s with 12 workers starting on 2 busy cores).
   */
  leaderStartMs?: number;
  /** The clock, for tests. Default Date.now. */
  now?: () => number;
}

/** A worker's place in its group, from before it starts until its attempt ends. */
export interface StaggerTicket {
  /**
   * Its group's prefix was not cached when it joined, so it may lead, and
   * then the earliest sign of its response (its first streamed event) matters.
   */
  readonly mayLead: boolean;
  /** Resolves when the first prompt may go; rejects with the signal's reason. */
  ready(signal: AbortSignal): Promise<void>;
  /** Every message of the worker. */
  observe(message: CliMessage): void;
  /** The attempt is over, however it ended. */
  release(): void;
}

const DEFAULT_MAX_WAIT_MS = 5_000;
const DEFAULT_LEADER_START_MS = 30_000;

interface Group {
  warmUntil: number;
  ttlMs: number;
  /** The leader's response reported neither a cache write nor a read: nothing to wait for. */
  uncached: boolean;
  leader: Ticket | undefined;
  /** When the leader's first request went out (its "requesting" status, a streamed event). */
  requestedAt: number | undefined;
  /**
   * The leader asked and its answer did not begin within maxWaitMs: it has stalled, and nobody waits for it
   * any more. Set by the timer that found it so, since the clock a timer runs on may be a millisecond ahead of now().
   */
  stalled: boolean;
  /** Workers holding their first prompt, in the order they became ready. */
  waiting: Set<Ticket>;
}

/** The usage of a response that has begun, or undefined when the message does not mean one has. */
function responseUsage(message: CliMessage): Record<string, unknown> | "none" | undefined {
  // A subagent's conversation has its own prefix.
  if ("parent_tool_use_id" in message && message.parent_tool_use_id) return undefined;
  if (message.type === "stream_event") {
    return message.event.type === "message_start" ? (message.event.message.usage ?? "none") : undefined;
  }
  // An API error comes as a synthetic assistant message: no response began.
  if (message.type === "assistant" && message.error === undefined && message.message.model !== "<synthetic>") {
    return message.message.usage ?? "none";
  }
  return undefined;
}

/** The CLI says so right before it calls the API (with partial messages, which a worker that may lead has). */
function isRequesting(message: CliMessage): boolean {
  return message.type === "system" && message.subtype === "status" && message.status === "requesting";
}

function tokens(usage: Record<string, unknown>, field: string): number {
  const value = usage[field];
  return typeof value === "number" ? value : 0;
}

interface Settings {
  maxWaitMs: number;
  leaderStartMs: number;
  now: () => number;
}

class Ticket implements StaggerTicket {
  readonly #group: Group;
  readonly #settings: Settings;
  /** Set while the worker waits: `open` lets its first prompt go, `rearm` sets its deadline again. */
  #wait: { open(): void; rearm(): void } | undefined;
  #released = false;

  constructor(
    readonly mayLead: boolean,
    group: Group,
    settings: Settings,
  ) {
    this.#group = group;
    this.#settings = settings;
  }

  ready(signal: AbortSignal): Promise<void> {
    const group = this.#group;
    const { now, maxWaitMs, leaderStartMs } = this.#settings;
    if (signal.aborted) return Promise.reject(signal.reason);
    if (group.uncached || group.warmUntil > now() || group.leader === this) return Promise.resolve();
    if (group.leader === undefined) {
      group.leader = this;
      return Promise.resolve();
    }
    // A leader that asked more than maxWaitMs ago and has no answer yet has stalled: nothing to wait for.
    if (group.stalled || (group.requestedAt !== undefined && group.requestedAt + maxWaitMs <= now())) return Promise.resolve();
    const readyAt = now();
    // Once the leader has asked, its answer gets maxWaitMs; until then, it gets leaderStartMs to ask.
    const deadline = () => (group.requestedAt === undefined ? readyAt + leaderStartMs : group.requestedAt + maxWaitMs);
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        group.waiting.delete(this);
        this.#wait = undefined;
      };
      const open = () => {
        finish();
        resolve();
      };
      const onAbort = () => {
        finish();
        reject(signal.reason);
      };
      const rearm = () => {
        clearTimeout(timer);
        timer = setTimeout(
          () => {
            if (group.requestedAt !== undefined) group.stalled = true;
            open();
          },
          Math.max(0, deadline() - now()),
        );
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#wait = { open, rearm };
      group.waiting.add(this);
      rearm();
    });
  }

  observe(message: CliMessage): void {
    const group = this.#group;
    if (group.leader === this && group.requestedAt === undefined && isRequesting(message)) {
      group.requestedAt = this.#settings.now();
      group.stalled = false;
      for (const waiting of group.waiting) waiting.#wait?.rearm();
      return;
    }
    const usage = responseUsage(message);
    if (usage === undefined) return;
    if (usage !== "none") {
      if (tokens(usage, "cache_creation_input_tokens") === 0 && tokens(usage, "cache_read_input_tokens") === 0) {
        if (group.leader === this) group.uncached = true;
      } else if (tokens((usage.cache_creation ?? {}) as Record<string, unknown>, "ephemeral_1h_input_tokens") > 0) {
        group.ttlMs = PROMPT_CACHE_TTL_MS["1h"];
      }
    }
    group.warmUntil = this.#settings.now() + group.ttlMs;
    if (group.leader === this) {
      group.leader = undefined;
      group.requestedAt = undefined;
      group.stalled = false;
    }
    for (const waiting of [...group.waiting]) waiting.#wait?.open();
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    const group = this.#group;
    group.waiting.delete(this);
    if (group.leader !== this) return;
    // The leader ended before its response began: the first worker waiting leads now, and the others wait for it.
    group.leader = undefined;
    group.requestedAt = undefined;
    group.stalled = false;
    const [next, ...others] = group.waiting;
    if (next) {
      group.leader = next;
      next.#wait?.open();
    }
    for (const waiting of others) waiting.#wait?.rearm();
  }
}

export class CacheStagger {
  readonly #groups = new Map<string, Group>();
  readonly #settings: Settings;

  constructor(options: CacheStaggerOptions = {}) {
    this.#settings = {
      maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
      leaderStartMs: options.leaderStartMs ?? DEFAULT_LEADER_START_MS,
      now: options.now ?? Date.now,
    };
  }

  /** A worker of group `key` is about to start. */
  join(key: string): StaggerTicket {
    let group = this.#groups.get(key);
    if (!group) {
      group = {
        warmUntil: 0,
        ttlMs: PROMPT_CACHE_TTL_MS["5m"],
        uncached: false,
        leader: undefined,
        requestedAt: undefined,
        stalled: false,
        waiting: new Set(),
      };
      this.#groups.set(key, group);
    }
    return new Ticket(this.#mayLead(group), group, this.#settings);
  }

  /** Whether a worker joining the group of `key` now may lead it: its prefix is not cached yet. */
  isCold(key: string): boolean {
    const group = this.#groups.get(key);
    return group === undefined || this.#mayLead(group);
  }

  #mayLead(group: Group): boolean {
    return !group.uncached && group.warmUntil <= this.#settings.now();
  }
}

/**
 * A task's place in its prefix group. A new process that may lead streams
 * partial messages: its group waits for its response to begin, and the
 * first streamed event says so at once, where the first assistant message
 * waits for a whole content block (a long thinking block, say). A task that
 * did not ask for them never sees them (hidePartial), from whichever process
 * serves it: a reused one may have been started to lead.
 */
export function joinPrefixGroup<R extends { info: TaskInfo }>(
  stagger: CacheStagger | undefined,
  plan: WorkerPlan<R>,
): { ticket: StaggerTicket | undefined; hidePartial: boolean; leasePlan: WorkerPlan<R> } {
  const ticket = stagger?.join(promptPrefixKey(plan.settings));
  const hidePartial = ticket !== undefined && !plan.settings.includePartialMessages;
  return { ticket, hidePartial, leasePlan: ticket?.mayLead && hidePartial ? asLeader(plan) : plan };
}

/**
 * The plan of a process started ahead of the work that will take it (before that work joins its group): started as
 * the work's own lease would be, able to lead while its group is cold.
 */
export function planAhead<R extends { info: TaskInfo }>(stagger: CacheStagger | undefined, plan: WorkerPlan<R>): WorkerPlan<R> {
  return stagger?.isCold(promptPrefixKey(plan.settings)) && !plan.settings.includePartialMessages ? asLeader(plan) : plan;
}

/** The plan, its processes started streaming partial messages (see joinPrefixGroup). */
function asLeader<R extends { info: TaskInfo }>(plan: WorkerPlan<R>): WorkerPlan<R> {
  return {
    ...plan,
    start: (signal: AbortSignal | undefined, extra?: Partial<WorkerOptions>) => plan.start(signal, { includePartialMessages: true, ...extra }),
  };
}
