// Budgets of an agent and of a task on the real CLI: the work under a spent budget stops (mid-turn for a task), the rest goes on.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { collect } from "../support/streams.ts";

const agent = (budgetUsd?: number) => ({ description: "a worker", prompt: "You answer briefly.", ...(budgetUsd !== undefined && { budgetUsd }) });

describe("budgets where the work is, on the real CLI", () => {
  it("an agent's budget stops its own tasks at the budget plus the task in flight; another agent's all succeed", async () => {
    // What a first task (it writes the prompt cache) and a second (it reads it) cost here, measured on a scripted model of their own.
    const probe = await createRehearsal({ reply: [{ text: "done {{prompt}}" }] });
    const measured = await rehearsedOrchestrator(probe, {
      concurrency: 1,
      cacheStagger: false,
      agents: { reviewer: agent() },
      script: () => "reply",
    });
    const [writes, reads] = await collect(measured.orchestrator.map(["p1", "p2"].map((name) => ({ name, prompt: name, agent: "reviewer" }))));
    expect(reads!.costUsd).toBeLessThan(writes!.costUsd / 5);
    // Room for the first and two more: the fourth is stopped in flight, the fifth and sixth never start.
    const budgetUsd = Number((writes!.costUsd + 2.5 * reads!.costUsd).toFixed(4));
    const server = await createRehearsal({ reply: [{ text: "done {{prompt}}" }] });
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
    expect(ran.length).toBeGreaterThan(2);
    expect(notRun.length, "the budget stopped some of its tasks").toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(budgetUsd + costliestRun);
    for (const result of notRun) {
      expect(result.status).toBe("skipped");
      expect(result.error).toMatchObject({ code: "BUDGET_EXCEEDED", budget: expect.stringMatching(/^agent reviewer, \$0\.\d+$/) });
      expect(result.error?.message).toMatch(/^budget_exceeded: agent reviewer, \$0\.\d+: /);
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

  it("holds a task whose agent's budget cannot pay what its finished tasks cost (median), saying so", async () => {
    const server = await createRehearsal({ reply: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 1,
      agents: { reviewer: agent(0.15) },
      script: () => "reply",
    });
    const results = await collect(orchestrator.map(["one", "two", "three"].map((name) => ({ name, prompt: name, agent: "reviewer" }))));
    const [first, ...held] = results.sort((a, b) => (a.startedAt ?? Infinity) - (b.startedAt ?? Infinity));
    // The first writes the prompt cache (about $0.11): what is left of $0.15 cannot pay another such task.
    expect(first!.status, first!.error?.message).toBe("succeeded");
    expect(0.15 - first!.costUsd).toBeLessThan(first!.costUsd);
    for (const result of held) {
      expect(result.status).toBe("skipped");
      expect(result.attempts).toBe(0);
      expect(result.error?.budget).toBe("agent reviewer, $0.15");
      expect(result.error?.message).toMatch(/is left and its agent's tasks cost \$0\.\d+ \(median\), so it was not started/);
    }
    expect(server.requests.filter((r) => r.outcome === "played")).toHaveLength(1);
  }, 120_000);

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
    // The first call writes the cache (about $0.12); each one after costs about a quarter of a cent: stopped a call or two past the limit.
    expect(result.costUsd).toBeGreaterThanOrEqual(budgetUsd);
    expect(result.costUsd).toBeLessThan(budgetUsd + 0.01);
  }, 120_000);
});
