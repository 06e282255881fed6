// Which budgets apply to a piece of work (the run's, its agent's, its task's), what is left of them, and whether a task can still pay.
import { emptyUsage } from "./accounting.ts";
import { Budget } from "./budget.ts";
import type { BudgetExceededError } from "./errors.ts";
import type { BudgetScope, BudgetUse, SpendingLedger, Usage } from "./types.ts";

export interface BudgetsOptions {
  runUsd: number | undefined;
  /** Agent name → its budget. */
  agentUsd: Record<string, number>;
  /** Where a budget's spending is counted; undefined: in this process. */
  ledgerFor(scope: BudgetScope): SpendingLedger | undefined;
  /** A budget was reached by spending elsewhere (a shared ledger). */
  onReached(reached: BudgetExceededError): void;
  /** Hold a task whose budgets cannot pay what its agent's tasks cost (median). Default true. */
  forecast?: boolean;
}

/** A task's own budget: its limit, and the name it is counted under (rounds of a loop share their task's). */
export interface TaskBudget {
  usd: number;
  name: string;
}

/**
 * Every budget of an orchestrator. A piece of work is under a list of them
 * (the run's, its agent's, its task's, and a spawned child's parent's too);
 * a charge counts against all of the list, and the work stops when any of
 * them is reached. `status` is what a script runtime asks: what is left of
 * the budgets that apply to one agent call.
 */
export class Budgets {
  readonly run: Budget;
  readonly #options: BudgetsOptions;
  readonly #agents = new Map<string, Budget>();
  readonly #tasks = new Map<string, Budget>();
  /** Cost of each agent's succeeded tasks ("" for tasks without an agent), for the forecast. */
  readonly #costs = new Map<string, number[]>();

  constructor(options: BudgetsOptions) {
    this.#options = options;
    this.run = this.#open(options.runUsd, { kind: "run" });
    for (const [name, usd] of Object.entries(options.agentUsd)) this.#agents.set(name, this.#open(usd, { kind: "agent", name }));
  }

  /** The budgets over work of `agent` (and of `task`, if it has one), added to those its parent's work is under. */
  applying(agent: string | undefined, task?: TaskBudget, parent: readonly Budget[] = [this.run]): Budget[] {
    const list = [...parent];
    const own = agent === undefined ? undefined : this.#agents.get(agent);
    if (own && !list.includes(own)) list.push(own);
    if (task) {
      let budget = this.#tasks.get(task.name);
      if (!budget) {
        budget = this.#open(task.usd, { kind: "task", name: task.name });
        this.#tasks.set(task.name, budget);
      }
      if (!list.includes(budget)) list.push(budget);
    }
    return list;
  }

  /** Whether `agent` has a budget of its own. */
  hasAgentBudget(agent: string | undefined): boolean {
    return agent !== undefined && this.#agents.has(agent);
  }

  /** Charges every budget of the list; returns those this charge reached. */
  charge(budgets: readonly Budget[], usd: number, usage: Usage): BudgetExceededError[] {
    const reached: BudgetExceededError[] = [];
    for (const budget of budgets) {
      // The tokens are counted once, in the run's budget; the others count dollars.
      const error = budget.charge(usd, budget === this.run ? usage : emptyUsage());
      if (error) reached.push(error);
    }
    return reached;
  }

  /** Throws the first spent budget's error: nothing under it may start. */
  throwIfExceeded(budgets: readonly Budget[]): void {
    for (const budget of budgets) budget.throwIfExceeded();
  }

  /**
   * The CLI's own limit for a process starting under the list when one of it is an agent's or a task's: the
   * smallest of their shares (what is left, less a reserve for the processes at work under each); else undefined.
   */
  processLimitUsd(budgets: readonly Budget[]): number | undefined {
    if (!budgets.some((b) => b !== this.run && b.limitUsd !== undefined)) return undefined;
    return Math.min(...budgets.flatMap((b) => (b.shareUsd === undefined ? [] : [b.shareUsd])));
  }

  /** A process starts work under every budget of the list; returns what to call when it ends. */
  atWork(budgets: readonly Budget[]): () => void {
    const ends = budgets.map((budget) => budget.atWork());
    return () => {
      for (const end of ends) end();
    };
  }

  /** The use of each budget of the list that has a limit (a script's `budget.remaining()` reads this). */
  status(budgets: readonly Budget[]): BudgetUse[] {
    return budgets.flatMap((budget) => (budget.limitUsd === undefined ? [] : [use(budget)]));
  }

  /** Every budget with a limit, the run's first. */
  list(): BudgetUse[] {
    return this.status([this.run, ...this.#agents.values(), ...this.#tasks.values()]);
  }

  /** A task of `agent` succeeded at this cost: the forecast learns from it. */
  finished(agent: string | undefined, costUsd: number): void {
    const key = agent ?? "";
    const costs = this.#costs.get(key) ?? [];
    costs.push(costUsd);
    this.#costs.set(key, costs);
  }

  /** The error to hold a task with when what is left of one of its budgets is less than its agent's tasks cost (median); else undefined. */
  forecast(agent: string | undefined, budgets: readonly Budget[]): BudgetExceededError | undefined {
    if (this.#options.forecast === false) return undefined;
    const costs = this.#costs.get(agent ?? "");
    if (!costs || costs.length === 0) return undefined;
    const typical = median(costs);
    const short = budgets.find((b) => b.remainingUsd !== undefined && b.remainingUsd < typical);
    return short?.error(typical);
  }

  #open(limitUsd: number | undefined, scope: BudgetScope): Budget {
    const budget = new Budget(limitUsd, this.#options.ledgerFor(scope), scope);
    budget.onReached((reached) => this.#options.onReached(reached));
    return budget;
  }
}

function use(budget: Budget): BudgetUse {
  return { scope: budget.scope, limitUsd: budget.limitUsd ?? 0, spentUsd: budget.spentUsd };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
