/**
 * A single-consumer queue that is filled by pushes and drained as an
 * AsyncIterable. `end()` finishes the iteration after what is buffered;
 * `fail(error)` makes the consumer's next read throw once the buffer is drained.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #buffer: T[] = [];
  #waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  #finished = false;
  #failure: { error: unknown } | undefined;

  get closed(): boolean {
    return this.#finished || this.#failure !== undefined;
  }

  push(value: T): void {
    if (this.closed) return;
    if (this.#waiter) {
      const { resolve } = this.#waiter;
      this.#waiter = undefined;
      resolve({ value, done: false });
    } else {
      this.#buffer.push(value);
    }
  }

  end(): void {
    if (this.closed) return;
    this.#finished = true;
    this.#settleWaiter();
  }

  fail(error: unknown): void {
    if (this.closed) return;
    this.#failure = { error };
    this.#settleWaiter();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#buffer.length > 0) return Promise.resolve({ value: this.#buffer.shift() as T, done: false });
    if (this.#failure) return Promise.reject(this.#failure.error);
    if (this.#finished) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: async () => {
        this.end();
        this.#buffer.length = 0;
        return { value: undefined, done: true };
      },
    };
  }

  #settleWaiter(): void {
    if (!this.#waiter || this.#buffer.length > 0) return;
    const { resolve, reject } = this.#waiter;
    this.#waiter = undefined;
    if (this.#failure) reject(this.#failure.error);
    else resolve({ value: undefined, done: true });
  }
}
