// budget.usd in a workflow script over an in-memory agent runner: what is left of the dollar budgets as the
// runner reports them, the dollars the agents spent, agent() past a spent budget, and a call's own budgetUsd
// reaching its task. The same through the real CLI is in budget-usd-cli.test.ts.
import { describe, expect } from "vitest";
import type { BudgetUse, TaskResult } from "../../src/orchestrator/index.ts";
import { type AgentCall, runWorkflowScript, taskSpecForCall } from "../../src/workflow/index.ts";
import { it } from "../support/fixtures.ts";
import { result } from "../support/swarm.ts";

const META = 'export const meta = { name: "spend", description: "dollars" }\n';

/** An agent's answer, costing `costUsd` and 100 output tokens (what the token `budget` counts), or its failure with `error`. */
function taskResult(call: AgentCall, costUsd: number, error?: TaskResult["error"]): TaskResult {
  const usage = { inputTokens: 10, outputTokens: 100, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  return result(call.label, error ? "failed" : "succeeded", { id: `t${call.index}`, text: `answer ${call.index}`, costUsd, usage, error });
}

/** A run whose budgets are the run's ($1) and agent reviewer's ($0.30), charged by each call's cost. */
async function run(body: string, costUsd = 0.25) {
  let runSpent = 0;
  let reviewerSpent = 0;
  const budgetsUsd = (agentType: string | undefined): BudgetUse[] => [
    { scope: { kind: "run" }, limitUsd: 1, spentUsd: runSpent },
    ...(agentType === "reviewer" ? [{ scope: { kind: "agent" as const, name: "reviewer" }, limitUsd: 0.3, spentUsd: reviewerSpent }] : []),
  ];
  const calls: AgentCall[] = [];
  const outcome = await runWorkflowScript({
    source: META + body,
    agents: {
      run: async (call) => {
        calls.push(call);
        runSpent += costUsd;
        if (call.options.agentType === "reviewer") reviewerSpent += costUsd;
        return taskResult(call, costUsd);
      },
    },
    budgetsUsd,
    budgetTokens: 1_000,
  });
  return { outcome, calls };
}

describe("budget.usd", () => {
  it("falls as the agents spend, the token budget beside it unchanged", async () => {
    const { outcome } = await run(`
      const seen = [[budget.usd.remaining(), budget.usd.spent(), budget.remaining()]]
      await agent("one")
      seen.push([budget.usd.remaining(), budget.usd.spent(), budget.remaining()])
      await agent("two")
      seen.push([budget.usd.remaining(), budget.usd.spent(), budget.remaining()])
      return { seen, total: budget.total, reviewer: budget.usd.remaining("reviewer") }`);
    expect(outcome.ok, outcome.error?.message).toBe(true);
    expect(outcome.result).toEqual({
      seen: [
        [1, 0, 1_000],
        [0.75, 0.25, 900],
        [0.5, 0.5, 800],
      ],
      total: 1_000,
      reviewer: 0.3,
    });
    expect(outcome.costUsd).toBe(0.5);
  });

  it("is Infinity with no dollar budget, and remaining() takes only an agent type", async () => {
    const outcome = await runWorkflowScript({
      source: `${META}const left = budget.usd.remaining(); try { budget.usd.remaining(3) } catch (e) { return [left, String(e)] }`,
      agents: { run: async (call) => taskResult(call, 0) },
    });
    expect(outcome.result).toEqual([null, "TypeError: budget.usd.remaining() takes an agent type: a string"]);
  });

  it("agent() past a spent budget throws naming it; parallel() makes it null and the other agents go on", async () => {
    const { outcome, calls } = await run(`
      await agent("first review", { agentType: "reviewer" })
      await agent("second review", { agentType: "reviewer" })
      const left = budget.usd.remaining("reviewer")
      let thrown
      try { await agent("third review", { agentType: "reviewer" }) } catch (e) { thrown = e.message }
      const both = await parallel([() => agent("late review", { agentType: "reviewer" }), () => agent("a fix")])
      return { left, thrown, both }`);
    expect(outcome.ok, outcome.error?.message).toBe(true);
    const result = outcome.result as { left: number; thrown: string; both: unknown[] };
    expect(result.left).toBe(0);
    expect(result.thrown).toMatch(/^budget_exceeded: agent reviewer, \$0\.30: the budget of \$0\.30 is spent/);
    expect(result.both).toEqual([null, "answer 2"]);
    expect(calls.map((call) => call.prompt)).toEqual(["first review", "second review", "a fix"]);
  });

  it("agent() whose task a budget stopped throws that budget's error", async () => {
    const outcome = await runWorkflowScript({
      source: `${META}return await agent("long")`,
      agents: {
        run: async (call) => taskResult(call, 0.1, { code: "BUDGET_EXCEEDED", message: "budget_exceeded: task long, $0.05: the budget is spent" }),
      },
    });
    expect(outcome.ok).toBe(false);
    expect(outcome.error?.message).toMatch(/budget_exceeded: task long, \$0\.05/);
  });

  it("opts.budgetUsd is the call's own task budget, counted under its row's name", () => {
    const call: AgentCall = {
      index: 0,
      label: "fix",
      phase: undefined,
      prompt: "fix it",
      options: { budgetUsd: 0.5 },
      workflow: undefined,
      key: "k",
      claudeCodeKey: "v2:k",
    };
    expect(taskSpecForCall(call, "fix#2", "framed", new AbortController().signal)).toMatchObject({ budgetUsd: 0.5, budgetName: "fix#2" });
  });

  it("refuses a budgetUsd that is not a positive number", async () => {
    const outcome = await runWorkflowScript({
      source: `${META}return await agent("x", { budgetUsd: -1 })`,
      agents: { run: async (call) => taskResult(call, 0) },
    });
    expect(outcome.error?.message).toMatch(/^Error: agent\(\): opts\.budgetUsd: /);
  });
});
