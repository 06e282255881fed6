// A server-sent events response: named events with JSON data, resumable ids, keep-alives and cleanup.
import type http from "node:http";

/** A comment line now and then keeps idle connections (and proxies) from timing the stream out. */
const KEEPALIVE_MS = 20_000;

/**
 * A server-sent events response: named events with JSON data, an id where
 * the client should resume (EventSource sends it back as Last-Event-ID), and
 * a cleanup when the client goes.
 */
export class EventStreamResponse {
  readonly #res: http.ServerResponse;
  readonly #keepalive: ReturnType<typeof setInterval>;
  readonly #onClose: (() => void)[] = [];
  #closed = false;

  constructor(req: http.IncomingMessage, res: http.ServerResponse) {
    this.#res = res;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    res.write(": cadre\n\n");
    this.#keepalive = setInterval(() => res.write(": keep-alive\n\n"), KEEPALIVE_MS);
    this.#keepalive.unref?.();
    req.on("close", () => this.close());
  }

  send(event: string, data: unknown, id?: number): void {
    if (this.#closed) return;
    this.#res.write(`${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Runs `cleanup` when the stream ends, from either side. */
  onClose(cleanup: () => void): void {
    if (this.#closed) cleanup();
    else this.#onClose.push(cleanup);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepalive);
    for (const cleanup of this.#onClose.splice(0)) cleanup();
    this.#res.end();
  }
}

/** The id of the last event a reconnecting EventSource saw, or -1. */
export function lastEventId(req: http.IncomingMessage): number {
  const value = Number(req.headers["last-event-id"]);
  return Number.isInteger(value) ? value : -1;
}

/**
 * At most one update per `intervalMs`, however fast changes come: the first
 * change after a quiet spell schedules one; the changes until it is sent
 * join it. A run of ten thousand tasks ending at any rate costs the page a
 * few updates a second.
 */
export class Coalesced {
  readonly #update: () => void;
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(update: () => void, intervalMs: number) {
    this.#update = update;
    this.#intervalMs = intervalMs;
  }

  changed(): void {
    if (this.#closed) return;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#update();
    }, this.#intervalMs);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}
