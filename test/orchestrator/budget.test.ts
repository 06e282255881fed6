import { describe, expect, it } from "vitest";
import { Budget } from "../../src/orchestrator/budget.ts";
import { BudgetExceededError } from "../../src/orchestrator/errors.ts";

describe("Budget", () => {
  it("hands out the error once, on the charge that reaches the limit", () => {
    const budget = new Budget(1);
    expect(budget.charge(0.6)).toBeUndefined();
    const reached = budget.charge(0.5);
    expect(reached).toBeInstanceOf(BudgetExceededError);
    expect(reached).toMatchObject({ code: "BUDGET_EXCEEDED", spentUsd: 1.1, budgetUsd: 1 });
    expect(budget.charge(0.1)).toBeUndefined();
    expect(budget.spentUsd).toBeCloseTo(1.2);
    expect(budget.exceeded).toBe(true);
    expect(() => budget.throwIfExceeded()).toThrow(BudgetExceededError);
  });

  it("without a limit is never exceeded", () => {
    const budget = new Budget(undefined);
    expect(budget.charge(1_000)).toBeUndefined();
    expect(() => budget.throwIfExceeded()).not.toThrow();
  });
});
