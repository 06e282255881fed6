import { AsyncQueue } from "../util/async-queue.ts";

/** A set of listeners that can also be read as an AsyncIterable. */
export class EventHub<E> {
  private readonly listeners = new Set<(event: E) => void>();
  private readonly openStreams = new Set<() => void>();

  on(listener: (event: E) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: E): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // One listener's bug must not stop the others or the run.
      }
    }
  }

  /** Ends every open stream (after what it has buffered). */
  endStreams(): void {
    for (const end of [...this.openStreams]) end();
  }

  /** Every event from now on, until the signal aborts or `end` is called. */
  stream(signal?: AbortSignal): AsyncIterable<E> & { end(): void } {
    const queue = new AsyncQueue<E>();
    const off = this.on((event) => queue.push(event));
    const end = () => {
      off();
      this.openStreams.delete(end);
      queue.end();
    };
    this.openStreams.add(end);
    signal?.addEventListener("abort", end, { once: true });
    return {
      end,
      [Symbol.asyncIterator]: () => {
        const it = queue[Symbol.asyncIterator]();
        return {
          next: () => it.next(),
          return: () => {
            end();
            return it.return!();
          },
        };
      },
    };
  }
}
