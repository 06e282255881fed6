// An event hub: listeners, and AsyncIterable streams of its events with a buffer.
import process from "node:process";
import { AsyncQueue } from "./async-queue.ts";

export type Listener<E> = (event: E) => void;

/** A stream of a hub's events; `end()` finishes it after what it has buffered. */
export interface EventStream<E> extends AsyncIterable<E> {
  end(): void;
}

export interface StreamOptions<E> {
  /** Aborting ends the stream. */
  signal?: AbortSignal;
  /** The stream ends after the first event this accepts (that event included). */
  endAfter?: (event: E) => boolean;
}

/**
 * Typed events delivered synchronously to listeners, and readable as an
 * AsyncIterable.
 *
 * One policy for a listener that throws: the others still get the event and
 * `emit` returns normally. Events come from protocol loops, the scheduler's
 * bookkeeping and timers, where an exception would corrupt state or end the
 * process, so a listener's bug must not break the run. The error is not
 * silently lost: with CADRE_DEBUG=1 it is written to stderr, once per listener
 * (one that fails on every event would flood it).
 */
export class EventHub<E> {
  readonly #listeners = new Set<Listener<E>>();
  readonly #openStreams = new Set<() => void>();
  readonly #reported = new WeakSet<Listener<E>>();

  /** Returns the unsubscribe function. */
  on(listener: Listener<E>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls the listeners subscribed now, in order; one unsubscribed meanwhile is skipped. */
  emit(event: E): void {
    for (const listener of [...this.#listeners]) {
      if (!this.#listeners.has(listener)) continue;
      try {
        listener(event);
      } catch (error) {
        this.#report(listener, error);
      }
    }
  }

  /** Every event from now on, until the signal aborts, `endAfter` accepts one, or `end()`/`endStreams()`. */
  stream(options: StreamOptions<E> = {}): EventStream<E> {
    const { signal, endAfter } = options;
    const queue = new AsyncQueue<E>();
    const off = this.on((event) => {
      queue.push(event);
      if (endAfter?.(event)) end();
    });
    const end = (): void => {
      off();
      this.#openStreams.delete(end);
      signal?.removeEventListener("abort", end);
      queue.end();
    };
    this.#openStreams.add(end);
    if (signal?.aborted) end();
    else signal?.addEventListener("abort", end, { once: true });
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

  /** Ends every open stream (after what it has buffered). */
  endStreams(): void {
    for (const end of [...this.#openStreams]) end();
  }

  #report(listener: Listener<E>, error: unknown): void {
    if (process.env.CADRE_DEBUG !== "1" || this.#reported.has(listener)) return;
    this.#reported.add(listener);
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`cadre: an event listener threw (reported once per listener; the others still got the event): ${detail}\n`);
  }
}
