// Budgets in memory: one budget's charge and stop, and which budgets apply to what (run, agent, task), what is left, the forecast.
import { describe, expect, it } from "vitest";
import { Budget } from "../../src/orchestrator/budget.ts";
import { Budgets } from "../../src/orchestrator/budgets.ts";
import { BudgetExceededError } from "../../src/orchestrator/errors.ts";
import { errorSummary } from "../../src/orchestrator/failure.ts";

const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

function budgets(options: { runUsd?: number; agentUsd?: Record<string, number>; forecast?: boolean } = {}) {
  const reached: BudgetExceededError[] = [];
  const book = new Budgets({
    runUsd: options.runUsd,
    agentUsd: options.agentUsd ?? {},
    ledgerFor: () => undefined,
    onReached: (error) => reached.push(error),
    forecast: options.forecast,
  });
  return { book, reached };
}

describe("Budget", () => {
  it("hands out the error once, on the charge that reaches the limit, and aborts its signal with it", () => {
    const budget = new Budget(1);
    expect(budget.charge(0.6)).toBeUndefined();
    expect(budget.signal.aborted).toBe(false);
    const reached = budget.charge(0.5);
    expect(reached).toBeInstanceOf(BudgetExceededError);
    expect(reached).toMatchObject({ code: "BUDGET_EXCEEDED", spentUsd: 1.1, budgetUsd: 1 });
    expect(budget.signal.reason).toBe(reached);
    expect(budget.charge(0.1)).toBeUndefined();
    expect(budget.spentUsd).toBeCloseTo(1.2);
    expect(budget.exceeded).toBe(true);
    expect(() => budget.throwIfExceeded()).toThrow(BudgetExceededError);
  });

  it("without a limit is never exceeded", () => {
    const budget = new Budget(undefined);
    expect(budget.charge(1_000)).toBeUndefined();
    expect(() => budget.throwIfExceeded()).not.toThrow();
    expect(budget.remainingUsd).toBeUndefined();
  });

  it("names the budget that did it, in the message and in the task's error summary", () => {
    const error = new Budget(2, undefined, { kind: "agent", name: "reviewer" }).error();
    expect(error.message).toMatch(/^budget_exceeded: agent reviewer, \$2\.00: /);
    expect(errorSummary(error)).toMatchObject({ code: "BUDGET_EXCEEDED", budget: "agent reviewer, $2.00" });
  });
});

describe("Budgets", () => {
  it("charges the run, the agent and the task; a reached agent budget stops that agent only", () => {
    const { book } = budgets({ runUsd: 10, agentUsd: { reviewer: 2 } });
    const review = book.applying("reviewer", { usd: 1.5, name: "review" });
    const fix = book.applying("fixer");
    expect(review.map((b) => b.scope)).toEqual([{ kind: "run" }, { kind: "agent", name: "reviewer" }, { kind: "task", name: "review" }]);
    expect(fix.map((b) => b.scope)).toEqual([{ kind: "run" }]);

    expect(book.charge(review, 1, usage)).toEqual([]);
    expect(book.processLimitUsd(review)).toBeCloseTo(0.5);
    expect(book.processLimitUsd(fix), "the run's budget alone: no limit on the process").toBeUndefined();
    const reached = book.charge(review, 0.6, usage);
    expect(reached.map((e) => e.budget)).toEqual(["task review, $1.50"]);
    // Another task of the agent (a round of the same task shares its budget).
    const again = book.applying("reviewer", { usd: 1.5, name: "review" });
    expect(() => book.throwIfExceeded(again)).toThrow(/task review/);
    const other = book.applying("reviewer");
    expect(book.charge(other, 0.5, usage).map((e) => e.budget)).toEqual(["agent reviewer, $2.00"]);
    expect(other[1]!.signal.aborted).toBe(true);
    expect(book.run.signal.aborted).toBe(false);
    expect(() => book.throwIfExceeded(fix)).not.toThrow();
    expect(book.list()).toEqual([
      { scope: { kind: "run" }, limitUsd: 10, spentUsd: 2.1 },
      { scope: { kind: "agent", name: "reviewer" }, limitUsd: 2, spentUsd: 2.1 },
      { scope: { kind: "task", name: "review" }, limitUsd: 1.5, spentUsd: 1.6 },
    ]);
  });

  it("a process's limit is its share of what is left: a reserve for each process at work, never under an even share", () => {
    const { book } = budgets({ agentUsd: { reviewer: 1 } });
    const list = book.applying("reviewer");
    expect(book.processLimitUsd(list), "alone: all that is left").toBe(1);
    const first = book.atWork(list);
    expect(book.processLimitUsd(list), "no call priced yet: nothing to reserve, half at the least").toBe(1);
    book.charge(list, 0.2, usage);
    list[1]!.noteCall(0.05);
    const second = book.atWork(list);
    // $0.80 left, less $0.05 for each of the two at work.
    expect(book.processLimitUsd(list)).toBeCloseTo(0.7, 10);
    list[1]!.noteCall(0.5);
    expect(book.processLimitUsd(list), "calls dearer than what is left: an even share of three").toBeCloseTo(0.8 / 3, 10);
    first();
    first();
    second();
    expect(book.processLimitUsd(list), "ended processes reserve nothing").toBeCloseTo(0.8, 10);
  });

  it("a child is under its parent's budgets and its own agent's", () => {
    const { book } = budgets({ agentUsd: { reviewer: 2, helper: 1 } });
    const parent = book.applying("reviewer", { usd: 1, name: "review" });
    const child = book.applying("helper", undefined, parent);
    expect(child.map((b) => b.scope.kind)).toEqual(["run", "agent", "task", "agent"]);
  });

  it("holds a task whose budgets cannot pay its agent's median task, unless turned off", () => {
    const { book } = budgets({ agentUsd: { reviewer: 0.2 } });
    const list = book.applying("reviewer");
    expect(book.forecast("reviewer", list), "no finished task yet: nothing to compare with").toBeUndefined();
    book.charge(list, 0.1, usage);
    book.finished("reviewer", 0.1);
    book.charge(list, 0.05, usage);
    book.finished("reviewer", 0.05);
    book.finished("reviewer", 0.06);
    // $0.05 left, the median task costs $0.06.
    const held = book.forecast("reviewer", list);
    expect(held?.message).toMatch(/^budget_exceeded: agent reviewer, \$0\.20: \$0\.050 is left and its agent's tasks cost \$0\.060 \(median\)/);
    expect(book.forecast("fixer", book.applying("fixer"))).toBeUndefined();
    const off = budgets({ agentUsd: { reviewer: 0.2 }, forecast: false }).book;
    const offList = off.applying("reviewer");
    off.charge(offList, 0.19, usage);
    off.finished("reviewer", 0.19);
    expect(off.forecast("reviewer", offList)).toBeUndefined();
  });
});
