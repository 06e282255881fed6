// A subscription's plan windows as the CLI reports them (rate_limit_event): past the user's threshold, or refused, no task starts until the window resets.
import { setTimeout as sleep } from "node:timers/promises";
import type { CliMessage } from "../protocol/index.ts";
import type { PlanWindowNews } from "./types.ts";

/** Whether the plan refused a turn among these messages (the CLI then ends it with an error). */
export function refusedByPlan(messages: readonly CliMessage[]): boolean {
  return messages.some((m) => m.type === "rate_limit_event" && m.rate_limit_info.status === "rejected");
}

export interface PlanWindowOptions {
  /** Percent of a window's use from which no task starts until it resets; undefined: only a refusal pauses. */
  pauseAt: number | undefined;
  tell(news: PlanWindowNews): void;
}

/**
 * Holds new starts while a plan window is past the threshold or refused, until
 * its reset time. API-key sessions never report one (the CLI sends
 * rate_limit_event to subscriptions only), so they are not held.
 */
export class PlanWindow {
  readonly #options: PlanWindowOptions;
  /** Epoch ms until which nothing starts; 0 when not paused. */
  #until = 0;
  #window = "";
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: PlanWindowOptions) {
    this.#options = options;
  }

  /** Whether this message refused a turn for the plan's limit (the turn then fails, and is run again after the reset). */
  observe(message: CliMessage): boolean {
    if (message.type !== "rate_limit_event") return false;
    const { status, resetsAt, rateLimitType, utilization } = message.rate_limit_info;
    const percent = utilization === undefined ? undefined : utilization * 100;
    const over = this.#options.pauseAt !== undefined && percent !== undefined && percent >= this.#options.pauseAt;
    if ((status === "rejected" || over) && resetsAt !== undefined)
      this.#pause(resetsAt * 1000, rateLimitType ?? "plan", percent, status === "rejected");
    return status === "rejected";
  }

  /** Whether a window holds new starts now. */
  get holding(): boolean {
    return Date.now() < this.#until;
  }

  /** Resolves once no window holds starts (at once when none does); rejects with the signal's reason. */
  async wait(signal: AbortSignal): Promise<void> {
    while (Date.now() < this.#until) await sleep(this.#until - Date.now(), undefined, { signal, ref: false });
    signal.throwIfAborted();
  }

  close(): void {
    clearTimeout(this.#timer);
  }

  #pause(until: number, window: string, utilization: number | undefined, rejected: boolean): void {
    if (until <= Date.now() || until <= this.#until) return;
    this.#until = until;
    this.#window = window;
    this.#options.tell({ state: "waiting", window, utilization, resetsAt: until, rejected });
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#until = 0;
      this.#options.tell({ state: "resumed", window: this.#window, utilization: undefined, resetsAt: until, rejected: false });
    }, until - Date.now());
    this.#timer.unref?.();
  }
}
