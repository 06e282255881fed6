// Which waiting tasks of a run are ready: each counts its unfinished dependencies, and a task's end visits only those waiting on it.

/** What the bookkeeping needs of a task. */
interface Dependent {
  name: string;
  depends_on: readonly string[];
}

/**
 * The tasks that wait for others to end. Linear in the tasks: a fan-out of a
 * hundred thousand tasks readies them all at once, and each end costs only
 * the tasks that wait on it.
 */
export class Dependencies<T extends Dependent> {
  readonly #waiting = new Set<T>();
  readonly #unfinished = new Map<T, number>();
  readonly #dependents = new Map<string, T[]>();
  readonly #ready: T[] = [];
  /** Read by index, not shift(): a skip readies more tasks while the list is being read. */
  #next = 0;

  /** How many tasks still wait (ready or not). */
  get size(): number {
    return this.#waiting.size;
  }

  /** A task waits for those of its dependencies that have not ended (`ended` says which have). */
  wait(task: T, ended: (name: string) => boolean): void {
    this.#waiting.add(task);
    const on = new Set(task.depends_on.filter((name) => !ended(name)));
    this.#unfinished.set(task, on.size);
    if (on.size === 0) this.#ready.push(task);
    for (const name of on) {
      const list = this.#dependents.get(name);
      if (list === undefined) this.#dependents.set(name, [task]);
      else list.push(task);
    }
  }

  /** A task ended: those waiting on it have one dependency less. */
  ended(name: string): void {
    for (const dependent of this.#dependents.get(name) ?? []) {
      const left = (this.#unfinished.get(dependent) ?? 1) - 1;
      this.#unfinished.set(dependent, left);
      if (left === 0) this.#ready.push(dependent);
    }
    this.#dependents.delete(name);
  }

  /** The next ready task, no longer waiting; undefined once none is (tasks readied meanwhile included). */
  takeReady(): T | undefined {
    while (this.#next < this.#ready.length) {
      const task = this.#ready[this.#next++]!;
      if (!this.#waiting.delete(task)) continue;
      this.#unfinished.delete(task);
      return task;
    }
    this.#ready.length = 0;
    this.#next = 0;
    return undefined;
  }

  /** The first `count` tasks still waiting, in the order they began to (after takeReady: those waiting on others). */
  *first(count: number): Iterable<T> {
    let left = count;
    for (const task of this.#waiting) {
      if (left-- <= 0) return;
      yield task;
    }
  }

  /** Every task still waiting, no longer waiting (nothing starts any more). */
  takeAll(): T[] {
    const all = [...this.#waiting];
    this.#waiting.clear();
    return all;
  }
}
