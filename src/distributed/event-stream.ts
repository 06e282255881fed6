// The run's orchestrator events from the hosts to the coordinator, through one Redis stream.
import type { Redis } from "ioredis";
import type { OrchestratorEvent } from "../orchestrator/index.ts";
import { readEvent } from "./wire.ts";

/**
 * The run's orchestrator events travel from the hosts to the coordinator in
 * one Redis stream: ordered per host, kept for the whole run, so a restarted
 * coordinator reads it again from the start and writes the same transcripts.
 */

/** Host side: events are appended in batches (one pipeline per tick), in order. */
export class EventWriter {
  #buffer: string[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;

  readonly #redis: Redis;
  readonly #key: string;
  readonly #host: string;

  constructor(redis: Redis, key: string, host: string) {
    this.#redis = redis;
    this.#key = key;
    this.#host = host;
  }

  push(event: OrchestratorEvent): void {
    this.#buffer.push(JSON.stringify(event));
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.flush();
    });
  }

  /** Resolves once every event pushed so far is in the stream. */
  flush(): Promise<void> {
    const batch = this.#buffer.splice(0);
    if (batch.length > 0) {
      this.#writing = this.#writing.then(async () => {
        const pipeline = this.#redis.pipeline();
        for (const event of batch) pipeline.xadd(this.#key, "*", "host", this.#host, "event", event);
        // A failed write is the connection's problem, which the host's watchdog reports.
        await pipeline.exec().catch(() => undefined);
      });
    }
    return this.#writing;
  }
}

/** "1718000000000-3" as a pair of numbers, for ordering. */
function streamId(id: string): [number, number] {
  const [ms = "0", seq = "0"] = id.split("-");
  return [Number(ms), Number(seq)];
}

function atOrAfter(a: string, b: string): boolean {
  const [am, as] = streamId(a);
  const [bm, bs] = streamId(b);
  return am > bm || (am === bm && as >= bs);
}

type StreamReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

/**
 * Coordinator side: reads the stream from its start on a connection of its
 * own (XREAD blocks it) and hands each event over, in order.
 */
export class EventReader {
  #position = "0-0";
  #stopped = false;
  #waiters: Array<{ id: string; resolve: () => void }> = [];
  readonly #done: Promise<void>;

  readonly #blocking: Redis;
  readonly #key: string;

  constructor(blocking: Redis, key: string, onEvent: (event: OrchestratorEvent, host: string) => void, onError: (error: unknown) => void) {
    this.#blocking = blocking;
    this.#key = key;

    this.#done = this.#loop(onEvent).catch((error: unknown) => {
      if (!this.#stopped) onError(error);
    });
  }

  /** Resolves once every event in the stream now has been handed over. */
  async caughtUp(redis: Redis): Promise<void> {
    const [last] = await redis.xrevrange(this.#key, "+", "-", "COUNT", 1);
    if (last === undefined || atOrAfter(this.#position, last[0])) return;
    await new Promise<void>((resolve) => this.#waiters.push({ id: last[0], resolve }));
  }

  /** Stops reading (after handing over what it has) and closes its connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    // A connection that is down does not fail its waiting read on disconnect: the loop is left behind then.
    const up = this.#blocking.status === "ready";
    this.#blocking.disconnect();
    if (up) await this.#done;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  async #loop(onEvent: (event: OrchestratorEvent, host: string) => void): Promise<void> {
    while (!this.#stopped) {
      const reply = (await this.#blocking.xread("COUNT", 500, "BLOCK", 1_000, "STREAMS", this.#key, this.#position)) as StreamReply;
      for (const [, entries] of reply ?? []) {
        for (const [id, fields] of entries) {
          this.#position = id;
          const field = (name: string) => fields[fields.indexOf(name) + 1] ?? "";
          onEvent(readEvent(field("event")), field("host"));
        }
      }
      this.#waiters = this.#waiters.filter((waiter) => {
        if (!atOrAfter(this.#position, waiter.id)) return true;
        waiter.resolve();
        return false;
      });
    }
  }
}
