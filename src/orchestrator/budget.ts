import { emptyUsage } from "./accounting.ts";
import { BudgetExceededError } from "./errors.ts";
import type { SpendingLedger, Usage } from "./types.ts";

/** The default ledger: spending counted in this process. */
class LocalLedger implements SpendingLedger {
  spentUsd = 0;

  add(usd: number): void {
    this.spentUsd += usd;
  }
}

/** The run's spending against its budget; the one place that says the budget is spent. */
export class Budget {
  readonly #limitUsd: number | undefined;
  readonly #ledger: SpendingLedger;
  #reported = false;

  constructor(limitUsd: number | undefined, ledger: SpendingLedger = new LocalLedger()) {
    this.#limitUsd = limitUsd;
    this.#ledger = ledger;
  }

  get spentUsd(): number {
    return this.#ledger.spentUsd;
  }

  get limitUsd(): number | undefined {
    return this.#limitUsd;
  }

  get exceeded(): boolean {
    return this.#limitUsd !== undefined && this.#ledger.spentUsd >= this.#limitUsd;
  }

  /** Adds a cost (and its token usage, for a shared ledger); returns the error to stop the run with when this charge reached the budget. */
  charge(usd: number, usage: Usage = emptyUsage()): BudgetExceededError | undefined {
    this.#ledger.add(usd, usage);
    return this.#reached();
  }

  /** Calls `listener` when spending elsewhere (a shared ledger) reaches the budget; a charge here returns it instead. */
  onReached(listener: (reached: BudgetExceededError) => void): void {
    this.#ledger.onChange?.(() => {
      const reached = this.#reached();
      if (reached) listener(reached);
    });
  }

  /** Throws when the budget is spent: nothing new may start. */
  throwIfExceeded(): void {
    if (this.exceeded) throw this.#error();
  }

  /** The error the first time the budget is found spent, else undefined. */
  #reached(): BudgetExceededError | undefined {
    if (this.#reported || !this.exceeded) return undefined;
    this.#reported = true;
    return this.#error();
  }

  #error(): BudgetExceededError {
    return new BudgetExceededError(this.spentUsd, this.#limitUsd ?? 0);
  }
}
