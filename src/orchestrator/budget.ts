import { BudgetExceededError } from "./errors.ts";

/** The run's spending against its budget; the one place that says the budget is spent. */
export class Budget {
  #spentUsd = 0;
  readonly #limitUsd: number | undefined;

  constructor(limitUsd: number | undefined) {
    this.#limitUsd = limitUsd;
  }

  get spentUsd(): number {
    return this.#spentUsd;
  }

  get limitUsd(): number | undefined {
    return this.#limitUsd;
  }

  get exceeded(): boolean {
    return this.#limitUsd !== undefined && this.#spentUsd >= this.#limitUsd;
  }

  /** Adds a cost; returns the error to stop the run with when this charge reached the budget. */
  charge(usd: number): BudgetExceededError | undefined {
    const before = this.exceeded;
    this.#spentUsd += usd;
    return !before && this.exceeded ? this.#error() : undefined;
  }

  /** Throws when the budget is spent: nothing new may start. */
  throwIfExceeded(): void {
    if (this.exceeded) throw this.#error();
  }

  #error(): BudgetExceededError {
    return new BudgetExceededError(this.#spentUsd, this.#limitUsd ?? 0);
  }
}
