// Budgets of an agent and of a task on the real CLI: the work under a spent budget stops (mid-turn for a task), the rest goes on.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent, TaskResult } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

async function collect(results: AsyncIterable<TaskResult>): Promise<TaskResult[]> {
  const all: TaskResult[] = [];
  for await (const result of results) all.push(result);
  return all;
}

const agent = (budgetUsd?: number) => ({ description: "a worker", prompt: "You answer briefly.", ...(budgetUsd !== undefined && { budgetUsd }) });

describe("budgets where the work is, on the real CLI", () => {
  it("an agent's budget stops its own tasks at the budget plus the task in flight; another agent's all succeed", async () => {
    const server = await createRehearsal({ reply: [{ text: "done {{prompt}}" }] });
    const budgetUsd = 0.11;
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 1,
      // The hard limit alone (the forecast would hold them earlier; see budget.test.ts).
      budgetForecast: false,
      cacheStagger: false,
      agents: { reviewer: agent(budgetUsd), fixer: { ...agent(), prompt: "You fix things." } },
      script: () => "reply",
    });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const reviews = Array.from({ length: 6 }, (_, i) => ({ name: `review-${i + 1}`, prompt: `review ${i + 1}`, agent: "reviewer" }));
    const fixes = Array.from({ length: 3 }, (_, i) => ({ name: `fix-${i + 1}`, prompt: `fix ${i + 1}`, agent: "fixer" }));
    // One at a time, reviews first: the first writes the prompt cache, the others read it.
    const results = await collect(orchestrator.map([...reviews, ...fixes]));
    const byName = new Map(results.map((r) => [r.name, r]));

    const reviewResults = reviews.map((t) => byName.get(t.name)!);
    const ran = reviewResults.filter((r) => r.attempts > 0);
    const notRun = reviewResults.filter((r) => r.attempts === 0);
    const spent = ran.reduce((sum, r) => sum + r.costUsd, 0);
    const costliestRun = Math.max(...ran.map((r) => r.costUsd));
    // Measured: $0.10 for the first, then $0.004 each: four run, two are stopped.
    expect(ran.length).toBeGreaterThan(1);
    // The first task writes the cache, the later ones read it: cheap next to it.
    expect(ran[0]!.costUsd).toBeGreaterThan(0.05);
    expect(ran[1]?.costUsd ?? 0).toBeLessThan(0.02);
    expect(notRun.length, "the budget stopped some of its tasks").toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(budgetUsd + costliestRun);
    for (const result of notRun) {
      expect(result.status).toBe("skipped");
      expect(result.error).toMatchObject({ code: "BUDGET_EXCEEDED", budget: "agent reviewer, $0.11" });
      expect(result.error?.message).toMatch(/^budget_exceeded: agent reviewer, \$0\.11/);
    }
    // Measured at the model: no review after the budget was reached asked it anything.
    const reviewRequests = server.requests.filter((r) => r.outcome === "played" && r.system.includes("You answer briefly."));
    expect(reviewRequests).toHaveLength(ran.length);
    for (const fix of fixes) expect(byName.get(fix.name)?.status, byName.get(fix.name)?.error?.message).toBe("succeeded");
    expect(events.filter((e) => e.type === "budget_exceeded")).toEqual([
      expect.objectContaining({ scope: { kind: "agent", name: "reviewer" }, budgetUsd }),
    ]);
    expect(orchestrator.totals.budgetExceeded, "the run's own budget is not spent").toBe(false);
    expect(orchestrator.budgets).toEqual([{ scope: { kind: "agent", name: "reviewer" }, limitUsd: budgetUsd, spentUsd: expect.closeTo(spent, 6) }]);
  }, 180_000);

  it("a task's budget stops a long task within one model call of being reached", async () => {
    const steps = Array.from({ length: 30 }, (_, i) => ({ tool_use: { name: "Bash", input: { command: `echo step ${i}` } } }));
    const server = await createRehearsal({ long: [...steps, { text: "all done" }] });
    const budgetUsd = 0.13;
    const { orchestrator } = await rehearsedOrchestrator(server, { script: () => "long", defaults: { allowedTools: ["Bash"] } });
    const result = await orchestrator.run({ name: "long", prompt: "work long", budgetUsd });

    expect(result.status).toBe("cancelled");
    expect(result.error).toMatchObject({ code: "BUDGET_EXCEEDED", budget: "task long, $0.13" });
    const played = server.requests.filter((r) => r.outcome === "played");
    expect(played.length, "stopped mid-run").toBeLessThan(30);
    // The first call writes the cache (about $0.12); each one after costs about a third of a cent: one call past the limit at most.
    expect(result.costUsd).toBeGreaterThanOrEqual(budgetUsd);
    expect(result.costUsd).toBeLessThan(budgetUsd + 0.005);
  }, 120_000);
});
