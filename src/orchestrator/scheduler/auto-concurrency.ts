// How many workers to run at once when nobody said: from the machine's cores and memory and how much of a turn waits on the model.
import { availableParallelism, freemem } from "node:os";

/** What the sizing reads of the machine; tests give their own. */
export interface MachineProbe {
  cores(): number;
  freeMemoryBytes(): number;
}

/** This machine. */
export const LOCAL_MACHINE: MachineProbe = { cores: () => availableParallelism(), freeMemoryBytes: () => freemem() };

/** The most workers auto sizing starts at once, however much the work waits. */
export const MAX_AUTO_CONCURRENCY = 64;
/** What one more claude process takes, with a margin (measured: about 200 MB resident on the pinned CLI). */
const WORKER_MEMORY_BYTES = 256 * 2 ** 20;
/** Memory left to the rest of the machine. */
const RESERVED_MEMORY_BYTES = 2 ** 30;
/** How much the latest turn moves the estimate of the share of a turn spent waiting on the model. */
const WEIGHT = 0.3;
/** The share is taken as at most this: a turn that only waits still costs its process some CPU. */
const MAX_WAITING_SHARE = 0.95;
/** What starting one more claude process costs, in CPU-seconds (measured: about 1 on the pinned CLI). */
const START_CPU_S = 1;
/** How much the limit may grow per turn: fast enough that a fan-out of waiting work is sized within two turns. */
const GROWTH = 4;

/**
 * The concurrency when the user gave none. It starts at the machine's cores:
 * a claude process costs about a CPU-second to start, so on a 2-core machine two
 * processes, reused, finish 32 short tasks sooner than eight. Each finished turn
 * says how much of it was spent waiting on the model (the CLI's `duration_api_ms`
 * against the turn's wall time); work that mostly waits gets more processes, as
 * many as keep the cores busy (cores / share of a turn not spent waiting), at
 * most four times as many per turn, and never more than free memory holds or
 * MAX_AUTO_CONCURRENCY. A turn slowed by a busy machine counts as not waiting,
 * which brings the number down again. Nor more than the work left pays for: N
 * processes cost N CPU-seconds to start and take the work in (work / N) rounds,
 * so with `pending` tasks of T seconds each on C cores, about √(pending · T · C)
 * processes finish soonest.
 */
export class AutoConcurrency {
  readonly #machine: MachineProbe;
  #limit: number;
  /** The share of a turn spent waiting on the model, averaged; undefined before the first turn. */
  #waiting: number | undefined;
  /** A turn's wall time in seconds, averaged. */
  #turnS = 0;

  constructor(machine: MachineProbe = LOCAL_MACHINE) {
    this.#machine = machine;
    this.#limit = Math.max(1, Math.min(machine.cores(), this.#memoryRoom(0)));
  }

  get limit(): number {
    return this.#limit;
  }

  /**
   * A turn ended after `wallMs`, `apiMs` of it in model calls; `running` workers
   * hold memory already, `pending` tasks are running or waiting (this one's
   * excluded). Returns the concurrency from now on.
   */
  observe(wallMs: number, apiMs: number | undefined, running: number, pending: number = Number.POSITIVE_INFINITY): number {
    if (!(wallMs > 0) || apiMs === undefined || !(apiMs >= 0)) return this.#limit;
    const share = Math.min(MAX_WAITING_SHARE, apiMs / wallMs);
    const average = (mean: number | undefined, value: number) => (mean === undefined ? value : mean + WEIGHT * (value - mean));
    this.#waiting = average(this.#waiting, share);
    this.#turnS = average(this.#turnS || undefined, wallMs / 1000);
    const cores = this.#machine.cores();
    // Rounded down: a process more than the cores can keep busy costs its start (about a CPU-second) for nothing.
    const wanted = Math.floor(cores / (1 - this.#waiting));
    const paidFor = Math.ceil(Math.sqrt((pending * this.#turnS * cores) / START_CPU_S));
    const grown = Math.min(wanted, paidFor, this.#limit * GROWTH, MAX_AUTO_CONCURRENCY, running + this.#memoryRoom(running));
    this.#limit = Math.max(1, Math.min(cores, MAX_AUTO_CONCURRENCY), grown);
    return this.#limit;
  }

  /** How many more processes free memory holds (what `running` hold is already taken from it). */
  #memoryRoom(running: number): number {
    const room = Math.floor((this.#machine.freeMemoryBytes() - RESERVED_MEMORY_BYTES) / WORKER_MEMORY_BYTES);
    return Math.max(running === 0 ? 1 : 0, room);
  }
}
