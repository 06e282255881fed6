import { describe, expect, it } from "vitest";
import { BudgetExceededError, TaskFailedError } from "../../src/orchestrator/errors.ts";
import { Orchestrator } from "../../src/orchestrator/orchestrator.ts";

describe("orchestrator error messages", () => {
  it("says a turn failed without naming the CLI's misleading 'success' subtype, and how to log in", () => {
    const error = new TaskFailedError("success", ["Not logged in · Please run /login"], undefined);
    expect(error.code).toBe("TASK_FAILED");
    expect(error.message).toBe(
      "the turn failed: Not logged in · Please run /login. Log in by running claude and /login, or set ANTHROPIC_API_KEY (cadre run --rehearse needs neither)",
    );
  });

  it("names other subtypes and the API status", () => {
    expect(new TaskFailedError("error_max_turns", [], 529).message).toBe('the turn ended with "error_max_turns" (API status 529): no details');
  });

  it("keeps small budgets readable", () => {
    expect(new BudgetExceededError(0.0123, 0.01).message).toContain("the budget of $0.010 is spent ($0.012 used)");
  });

  it("rejects a bad concurrency at construction, in p-queue's words", () => {
    expect(() => new Orchestrator({ concurrency: 0 })).toThrow("Expected `concurrency` to be a whole number from 1 and up, got `0` (number)");
  });
});
