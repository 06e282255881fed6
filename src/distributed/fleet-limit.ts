// The fleet's answer to rate limits: one adaptive limit, kept by the coordinator, applied to the run's queue.
import type { Queue } from "bullmq";
import { AdaptiveLimit, type RateLimitState } from "../orchestrator/index.ts";

/**
 * The fleet's answer to rate limits, kept by the coordinator alone (so hosts
 * never race to set it). What the hosts meet drives one AdaptiveLimit, as it
 * drives one orchestrator's scheduler: a host's back-off (its 429 or 529)
 * halves the limit and starts a back-off, successes raise the limit again.
 * Both apply to the run's queue: the effective limit is its global
 * concurrency, and a back-off is BullMQ's manual rate limit, during which no
 * host takes a task.
 */
export class FleetLimit {
  readonly #adaptive: AdaptiveLimit;
  #published: RateLimitState;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Queue updates in order: a later limit must not be overtaken by an earlier one. */
  #applying: Promise<void> = Promise.resolve();

  readonly #queue: Queue;
  readonly #publish: (state: RateLimitState) => void;

  constructor(limit: number, queue: Queue, publish: (state: RateLimitState) => void) {
    this.#queue = queue;
    this.#publish = publish;

    this.#adaptive = new AdaptiveLimit(limit);
    this.#published = this.#adaptive.state(Date.now());
  }

  /** A host backs off until `until` (epoch ms). */
  rateLimited(until: number): void {
    const now = Date.now();
    if (until <= now) return;
    this.#adaptive.rateLimited(now, until - now);
    this.#apply();
  }

  /** A task succeeded somewhere. */
  succeeded(): void {
    this.#adaptive.succeeded(Date.now());
    this.#apply();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #apply(): void {
    const now = Date.now();
    const state = this.#adaptive.state(now);
    clearTimeout(this.#timer);
    // The end of a back-off is a change too: publish it when it comes.
    if (state.backoffUntil !== null) this.#timer = setTimeout(() => this.#apply(), state.backoffUntil - now);
    const last = this.#published;
    if (last.effectiveLimit === state.effectiveLimit && last.backoffUntil === state.backoffUntil && last.rateLimited === state.rateLimited) return;
    this.#published = state;
    this.#publish(state);
    this.#applying = this.#applying
      .then(async () => {
        await this.#queue.setGlobalConcurrency(state.effectiveLimit);
        const left = (state.backoffUntil ?? 0) - Date.now();
        if (left > 0) await this.#queue.rateLimit(left);
      })
      .catch(() => {
        // Redis is down: the watchdog reports it; the next change tries again, and each host's own back-off holds meanwhile.
      });
  }
}
