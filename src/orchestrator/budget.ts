// One budget (the run's, an agent's or a task's): its spending, its limit, and the stop it raises when reached.
import { emptyUsage } from "./accounting.ts";
import { BudgetExceededError } from "./errors.ts";
import type { BudgetScope, BudgetUse, SpendingLedger, Usage } from "./types.ts";

/** The default ledger: spending counted in this process. */
class LocalLedger implements SpendingLedger {
  spentUsd = 0;

  add(usd: number): void {
    this.spentUsd += usd;
  }
}

/** One budget's spending against its limit; the one place that says it is spent. */
export class Budget {
  readonly scope: BudgetScope;
  readonly #limitUsd: number | undefined;
  readonly #ledger: SpendingLedger;
  /** Aborted, with the error, once the budget is found spent: what it covers stops. */
  readonly #stop = new AbortController();
  /** Processes at work under the budget now. */
  #atWork = 0;
  /** The costliest model call charged to the budget so far: what a process at work may be generating now. */
  #costliestCallUsd = 0;

  constructor(limitUsd: number | undefined, ledger: SpendingLedger = new LocalLedger(), scope: BudgetScope = { kind: "run" }) {
    this.#limitUsd = limitUsd;
    this.#ledger = ledger;
    this.scope = scope;
  }

  get spentUsd(): number {
    return this.#ledger.spentUsd;
  }

  get limitUsd(): number | undefined {
    return this.#limitUsd;
  }

  /** What is left; undefined without a limit. */
  get remainingUsd(): number | undefined {
    return this.#limitUsd === undefined ? undefined : Math.max(0, this.#limitUsd - this.spentUsd);
  }

  get exceeded(): boolean {
    return this.#limitUsd !== undefined && this.#ledger.spentUsd >= this.#limitUsd;
  }

  /** Aborts (with a BudgetExceededError) when the budget is reached, here or, with a shared ledger, elsewhere. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /**
   * What a process that starts now under the budget may spend (see Budgets.processLimitUsd): what is left, less
   * a reserve for each process already at work (the costliest call so far: the one it may be generating), but
   * never less than an even share of what is left. Undefined without a limit.
   */
  get shareUsd(): number | undefined {
    const left = this.remainingUsd;
    if (left === undefined) return undefined;
    return Math.max(left - this.#atWork * this.#costliestCallUsd, left / (this.#atWork + 1));
  }

  /** A process starts work under the budget; returns what to call when it ends. */
  atWork(): () => void {
    this.#atWork++;
    let ended = false;
    return () => {
      if (!ended) this.#atWork--;
      ended = true;
    };
  }

  /** A model call under the budget was priced at `usd` as its reply arrived. */
  noteCall(usd: number): void {
    this.#costliestCallUsd = Math.max(this.#costliestCallUsd, usd);
  }

  /** Adds a cost (and its token usage, for a shared ledger); returns the error to stop with when this charge reached the budget. */
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
    if (this.exceeded) throw this.error();
  }

  /** The error that names this budget; with `forecastUsd`, the one that says what is left cannot pay for a task. */
  error(forecastUsd?: number): BudgetExceededError {
    return new BudgetExceededError(this.spentUsd, this.#limitUsd ?? 0, this.scope, forecastUsd);
  }

  /** The error the first time the budget is found spent, else undefined. */
  #reached(): BudgetExceededError | undefined {
    if (this.#stop.signal.aborted || !this.exceeded) return undefined;
    const reached = this.error();
    this.#stop.abort(reached);
    return reached;
  }
}

/** The error of the first spent budget among `uses` (budgets and their use now, as Orchestrator.budgetStatus gives them), if one is. */
export function spentBudgetOf(uses: readonly BudgetUse[]): BudgetExceededError | undefined {
  const spent = uses.find((use) => use.spentUsd >= use.limitUsd);
  return spent && new BudgetExceededError(spent.spentUsd, spent.limitUsd, spent.scope);
}

/** What is left of the tightest budget among `uses` (Infinity when there is none). */
export function remainingOf(uses: readonly BudgetUse[]): number {
  return Math.max(0, Math.min(Infinity, ...uses.map((use) => use.limitUsd - use.spentUsd)));
}
