// `cadre run` with an agent's budget, on the real CLI and the scripted model: what it stopped says so, spend by agent in the record, the table and --json; older records still read.
import { describe, expect, it } from "vitest";
import { recordTotals } from "../../src/dashboard/record-view.ts";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { recordSpendByAgent, SummarySchema } from "../../src/run/index.ts";
import { cadre, readSummary, swarmFolder } from "../support/cli.ts";

const folder = swarmFolder("cadre-run-budgets-");

describe("cadre run with budgets", () => {
  it("an agent's budget stops its tasks and names itself; the other agent's all succeed; spend by agent in summary.json, the table and --json", async () => {
    // What a first review (it writes the prompt cache) and a second (it reads it) cost here.
    const probeFile = await folder.config("probe.yaml", [
      "concurrency: 1",
      "agents:",
      "  reviewer: { description: reviews, prompt: You review. }",
      "tasks:",
      "  - { name: p1, agent: reviewer, prompt: review 1, priority: 2 }",
      "  - { name: p2, agent: reviewer, prompt: review 2, priority: 1 }",
      "rehearsal:",
      "  p1: [{ text: reviewed }]",
      "  p2: [{ text: reviewed }]",
    ]);
    const probe = await cadre(["run", probeFile, "--rehearse", "--out", folder.path("probe-out")]);
    expect(probe.exitCode, probe.stderr).toBe(0);
    const [writes, reads] = (await readSummary(folder.path("probe-out"))).tasks.map((t) => t.cost_usd);
    // Room for the first and two more: the fourth is stopped in flight, the fifth and sixth never start.
    const budgetUsd = Number((writes! + 2.5 * reads!).toFixed(4));
    const label = `agent reviewer, $${budgetUsd}`;

    const reviews = Array.from(
      { length: 6 },
      (_, i) => `  - { name: review-${i + 1}, agent: reviewer, prompt: review ${i + 1}, priority: ${20 - i} }`,
    );
    const fixes = Array.from({ length: 3 }, (_, i) => `  - { name: fix-${i + 1}, agent: fixer, prompt: fix ${i + 1} }`);
    const file = await folder.config("agent-budget.yaml", [
      "name: agent-budget",
      "concurrency: 1",
      // The hard limit alone: the forecast would hold the reviews once the first one's cost is known.
      "budget_forecast: false",
      "agents:",
      `  reviewer: { description: reviews, prompt: You review., budget_usd: ${budgetUsd} }`,
      "  fixer: { description: fixes, prompt: You fix. }",
      "tasks:",
      ...reviews,
      ...fixes,
      "rehearsal:",
      ...Array.from({ length: 6 }, (_, i) => `  review-${i + 1}: [{ text: reviewed }]`),
      ...Array.from({ length: 3 }, (_, i) => `  fix-${i + 1}: [{ text: fixed }]`),
    ]);
    const out = folder.path("agent-budget-out");
    const run = await cadre(["run", file, "--rehearse", "--rehearse-budget", "--json", "--out", out]);
    expect(run.exitCode, run.stderr).toBe(1);

    const summary = await readSummary(out);
    const reviewTasks = summary.tasks.filter((t) => t.agent === "reviewer");
    const ran = reviewTasks.filter((t) => t.attempts > 0);
    const stopped = reviewTasks.filter((t) => t.attempts === 0);
    expect(ran.length).toBeGreaterThan(2);
    expect(stopped.length).toBeGreaterThan(0);
    for (const task of stopped) {
      expect(task.status).toBe("skipped");
      expect(task.error).toMatchObject({ code: "BUDGET_EXCEEDED", budget: label });
      expect(task.error?.message.startsWith(`budget_exceeded: ${label}: `)).toBe(true);
    }
    for (const task of summary.tasks.filter((t) => t.agent === "fixer")) expect(task.status).toBe("succeeded");
    const byAgent = summary.totals.by_agent!;
    const costliest = Math.max(...ran.map((t) => t.cost_usd));
    expect(byAgent.reviewer).toMatchObject({ tasks: 6, budget_usd: budgetUsd });
    expect(byAgent.reviewer!.cost_usd).toBeLessThanOrEqual(budgetUsd + costliest);
    expect(byAgent.fixer).toMatchObject({ tasks: 3, budget_usd: null });
    expect(byAgent.reviewer!.cost_usd + byAgent.fixer!.cost_usd).toBeCloseTo(summary.totals.cost_usd, 6);

    // --json: the budget's stop, and each task that it kept from starting, say which budget.
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as OrchestratorEvent);
    expect(events.filter((e) => e.type === "budget_exceeded")).toEqual([
      expect.objectContaining({ scope: { kind: "agent", name: "reviewer" }, budgetUsd: budgetUsd }),
    ]);
    const costs = events.filter((e) => e.type === "cost" && e.task.agent === "reviewer");
    expect(costs.at(-1)).toMatchObject({ budgets: [{ scope: { kind: "agent", name: "reviewer" }, limitUsd: budgetUsd }] });
    // The final table (on stderr with --json) breaks the spend down by agent.
    expect(run.stderr).toMatch(/^by agent {2}reviewer ~\$[\d.]+ of \$[\d.]+ \(budget reached\), fixer ~\$[\d.]+$/m);

    // A record written before by_agent existed still reads, and its spend by agent is added up from its rows.
    const older = JSON.parse(JSON.stringify(summary)) as typeof summary;
    delete older.totals.by_agent;
    const reread = SummarySchema.parse(older);
    const added = recordSpendByAgent(reread);
    expect(added.reviewer!.cost_usd).toBeCloseTo(byAgent.reviewer!.cost_usd, 9);
    expect(added.fixer!.tasks).toBe(3);
    expect(
      recordTotals(older)
        .byAgent.map((a) => a.agent)
        .sort(),
    ).toEqual(["fixer", "reviewer"]);
  }, 240_000);
});
