// The concurrency limit that rate limits lower and successes raise again, with its back-off.
import { backoffDelay } from "../../util/backoff.ts";
import { requireDelay, requireLimit } from "./errors.ts";

/** What the scheduler currently allows, as published in `rate_limit` events. */
export interface RateLimitState {
  /** The configured global limit. */
  limit: number;
  /** The limit new starts obey now: `limit` lowered by rate limits, raised back by successes. */
  effectiveLimit: number;
  /** Epoch milliseconds before which no job starts, or null when not backing off. */
  backoffUntil: number | null;
  /** True while backing off or while `effectiveLimit` is below `limit`. */
  rateLimited: boolean;
}

export interface AdaptiveLimitOptions {
  /** Ceiling of the first back-off after a rate limit; it doubles with each further one before a success. Default 1000. */
  baseBackoffMs?: number;
  /** Cap on a computed back-off (a server's retry-after is honoured as given). Default 60000. */
  maxBackoffMs?: number;
  /** Successes needed to raise the effective limit by one. Default 1. */
  successesPerStep?: number;
}

/**
 * Additive-increase / multiplicative-decrease of a concurrency limit, plus a
 * back-off window. Pure state over a caller-supplied clock.
 *
 * A rate limit that arrives while a back-off is in force belongs to the same
 * episode: it comes from a job that started before the decrease (many running
 * workers hit the same limit at once), so it may lengthen the back-off to a
 * server's retry-after but does not halve the limit again.
 */
export class AdaptiveLimit {
  #limit: number;
  readonly #baseBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #successesPerStep: number;
  #effective: number;
  #backoffUntil = 0;
  /** Rate-limit episodes since the last success: the back-off exponent. */
  #streak = 0;
  #successes = 0;

  /** `limit` is trusted: the Scheduler checked it. */
  constructor(limit: number, options: AdaptiveLimitOptions = {}) {
    this.#limit = limit;
    this.#effective = limit;
    this.#baseBackoffMs = requireDelay("rateLimit.baseBackoffMs", options.baseBackoffMs ?? 1000);
    this.#maxBackoffMs = requireDelay("rateLimit.maxBackoffMs", options.maxBackoffMs ?? 60_000);
    this.#successesPerStep = requireLimit("rateLimit.successesPerStep", options.successesPerStep ?? 1);
  }

  get limit(): number {
    return this.#limit;
  }

  /** A new configured limit (`limit` is trusted); what rate limits took off stays off. */
  resize(limit: number): void {
    const lowered = this.#limit - this.#effective;
    this.#limit = limit;
    this.#effective = Math.max(1, limit - lowered);
  }

  rateLimited(now: number, retryAfterMs?: number): void {
    const retryAfter = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined;
    if (now >= this.#backoffUntil) {
      this.#effective = Math.max(1, Math.floor(this.#effective / 2));
      this.#successes = 0;
      const delay = retryAfter ?? backoffDelay(this.#streak, this.#baseBackoffMs, this.#maxBackoffMs);
      this.#streak += 1;
      this.#backoffUntil = now + delay;
    } else if (retryAfter !== undefined) {
      this.#backoffUntil = Math.max(this.#backoffUntil, now + retryAfter);
    }
  }

  succeeded(now: number): void {
    // A job that started before the back-off finishing well says nothing about the limit being lifted.
    if (now < this.#backoffUntil) return;
    this.#streak = 0;
    if (this.#effective >= this.#limit) return;
    this.#successes += 1;
    if (this.#successes < this.#successesPerStep) return;
    this.#successes = 0;
    this.#effective += 1;
  }

  state(now: number): RateLimitState {
    const backoffUntil = now < this.#backoffUntil ? this.#backoffUntil : null;
    return {
      limit: this.#limit,
      effectiveLimit: this.#effective,
      backoffUntil,
      rateLimited: backoffUntil !== null || this.#effective < this.limit,
    };
  }
}
