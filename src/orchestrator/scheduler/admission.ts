/**
 * How many tasks of a fan-out wait inside the scheduler at once. A task that
 * waits there holds its whole machinery (its stop, its retries, its place in
 * p-queue: about 8 KB), so a fan-out of ten thousand tasks held some 80 MB
 * before the first one ended, and the heap stayed that large for the rest of
 * the run. Past a few times the limit of its lane (an agent with a limit of
 * its own, or all the others together), a task waits here instead, as an
 * entry of a few dozen bytes, and is admitted as one of those before it
 * starts. Tasks start in the scheduler's order all the same: the highest
 * priority first, then the earliest; a task of a higher priority than every
 * admitted one still waiting is admitted at once.
 */
import { own } from "../../util/own.ts";

/** What an admitted task says once it has started (or ended without starting): the next one of its lane is admitted. */
export interface Admitted {
  started(): void;
}

/** Filled in by `enter` while it holds the task: `withdraw` lets it through at once (a user stopped it). */
export interface Withdrawal {
  withdraw?: () => void;
}

interface Held {
  readonly signal: AbortSignal;
  readonly admit: (admitted: Admitted) => void;
}

/** Held tasks of one priority, first in first out (a head index: a fan-out of 100,000 never shifts an array). */
interface Queue {
  items: Held[];
  head: number;
}

interface Lane {
  readonly limit: number;
  /** Admitted and not yet started, by priority. */
  readonly admitted: Map<number, number>;
  admittedCount: number;
  readonly held: Map<number, Queue>;
}

/** A lane admits at least this many tasks beyond what it runs at once. */
const MIN_ADMITTED = 64;

export class Admission {
  readonly #lanes = new Map<string | undefined, Lane>();
  readonly #keyLimits: Readonly<Record<string, number>>;
  readonly #concurrency: number;
  readonly #watched = new WeakSet<AbortSignal>();

  constructor(concurrency: number, keyLimits: Readonly<Record<string, number>> = {}) {
    this.#concurrency = concurrency;
    this.#keyLimits = keyLimits;
  }

  /**
   * Resolves once the task may join the scheduler's queues; at once when `signal` has aborted (it then ends there).
   * While it holds the task, `withdrawal.withdraw` lets that one task through at once, to end as a stopped one.
   */
  enter(key: string | undefined, priority: number, signal: AbortSignal, withdrawal?: Withdrawal): Promise<Admitted> {
    const lane = this.#lane(key);
    if (signal.aborted || lane.admittedCount < lane.limit || priority > lowest(lane.admitted)) return Promise.resolve(this.#admit(lane, priority));
    this.#watch(signal);
    return new Promise((admit) => {
      let queue = lane.held.get(priority);
      if (queue === undefined) {
        queue = { items: [], head: 0 };
        lane.held.set(priority, queue);
      }
      const held: Held = { signal, admit };
      queue.items.push(held);
      if (withdrawal) withdrawal.withdraw = () => this.#withdraw(lane, priority, held);
    });
  }

  /** Lets one held task through (a no-op once it has been admitted): a user's stop, rare, so a search of its queue. */
  #withdraw(lane: Lane, priority: number, held: Held): void {
    const queue = lane.held.get(priority);
    const at = queue === undefined ? -1 : queue.items.indexOf(held, queue.head);
    if (queue === undefined || at === -1) return;
    queue.items.splice(at, 1);
    if (queue.head === queue.items.length) lane.held.delete(priority);
    held.admit(this.#admit(lane, priority));
  }

  #lane(key: string | undefined): Lane {
    const laneKey = key !== undefined && own(this.#keyLimits, key) !== undefined ? key : undefined;
    let lane = this.#lanes.get(laneKey);
    if (lane === undefined) {
      const limit = laneKey === undefined ? this.#concurrency : this.#keyLimits[laneKey]!;
      lane = { limit: Math.max(MIN_ADMITTED, 4 * limit), admitted: new Map(), admittedCount: 0, held: new Map() };
      this.#lanes.set(laneKey, lane);
    }
    return lane;
  }

  #admit(lane: Lane, priority: number): Admitted {
    lane.admitted.set(priority, (lane.admitted.get(priority) ?? 0) + 1);
    lane.admittedCount++;
    let done = false;
    return {
      started: () => {
        if (done) return;
        done = true;
        const left = lane.admitted.get(priority)! - 1;
        if (left === 0) lane.admitted.delete(priority);
        else lane.admitted.set(priority, left);
        lane.admittedCount--;
        this.#next(lane);
      },
    };
  }

  /** Admits the lane's first held task (the highest priority, then the earliest) while there is room. */
  #next(lane: Lane): void {
    while (lane.admittedCount < lane.limit && lane.held.size > 0) {
      const priority = Math.max(...lane.held.keys());
      const queue = lane.held.get(priority)!;
      const held = queue.items[queue.head]!;
      queue.head++;
      if (queue.head === queue.items.length) lane.held.delete(priority);
      else if (queue.head > 1024 && queue.head * 2 > queue.items.length) {
        queue.items = queue.items.slice(queue.head);
        queue.head = 0;
      }
      held.admit(this.#admit(lane, priority));
    }
  }

  /** Once per stop signal: when it aborts, every task it held is let through, to end as the scheduler ends an aborted job. */
  #watch(signal: AbortSignal): void {
    if (this.#watched.has(signal)) return;
    this.#watched.add(signal);
    signal.addEventListener("abort", () => this.#release(signal), { once: true });
  }

  #release(signal: AbortSignal): void {
    for (const lane of this.#lanes.values()) {
      for (const [priority, queue] of lane.held) {
        const kept: Held[] = [];
        for (const held of queue.items.slice(queue.head)) {
          if (held.signal === signal) held.admit(this.#admit(lane, priority));
          else kept.push(held);
        }
        if (kept.length === 0) lane.held.delete(priority);
        else lane.held.set(priority, { items: kept, head: 0 });
      }
    }
  }
}

/** The lowest priority among the admitted tasks still waiting; none: +Infinity (nothing to pass). */
function lowest(admitted: ReadonlyMap<number, number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const priority of admitted.keys()) if (priority < min) min = priority;
  return min;
}
