// An agent's budget on two `cadre worker` hosts: counted once in Redis, so what one host spends stops the agent's work on both.
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const swarm = (budget: string[]) => [
  "name: fleet-budget",
  "concurrency: 2",
  "budget_forecast: false",
  "agents:",
  `  reviewer: { description: reviews, prompt: You review.${budget.join("")} }`,
  "  fixer: { description: fixes, prompt: You fix. }",
  "tasks:",
  ...Array.from({ length: 8 }, (_, i) => `  - { name: review-${i + 1}, agent: reviewer, prompt: review ${i + 1}, priority: 10 }`),
  ...Array.from({ length: 2 }, (_, i) => `  - { name: fix-${i + 1}, agent: fixer, prompt: fix ${i + 1} }`),
];

describe("budgets on two hosts", () => {
  it("one agent's budget holds over both hosts; the other agent's tasks all succeed", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: [{ text: "done {{prompt}}", delay_ms: 300 }] });
    const hosts = [
      await startHost(redis, model, { name: "a", script: "fleet", concurrency: 1 }),
      await startHost(redis, model, { name: "b", script: "fleet", concurrency: 1 }),
    ];
    // A first run without a budget writes the prompt cache and measures what a review costs once it is written.
    const probe = await swarmFile(swarm([]));
    const probeOut = join(await tempHome("cadre-out-"), "probe");
    const probeRun = await runDistributed(probe, redis, probeOut);
    expect(probeRun.exitCode, probeRun.stderr + probeRun.stdout).toBe(0);
    // The reviews that wrote the cache (one per host at most) cost most; the sixth cheapest read it.
    const reviewCosts = (await readSummary(probeOut)).tasks.filter((t) => t.agent === "reviewer").map((t) => t.cost_usd);
    const cached = reviewCosts.sort((a, b) => a - b)[5]!;
    // Room for three and a half reviews: counted on each host alone, each host would run its four; counted once, at most
    // three and the two in flight run, and the rest are kept from starting.
    const budgetUsd = Number((3.5 * cached).toFixed(4));
    const file = join(dirname(probe), "budget.yaml");
    await writeFile(file, `${swarm([`, budget_usd: ${budgetUsd}`]).join("\n")}\n`);
    const out = join(await tempHome("cadre-out-"), "run");

    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(1);
    const summary = await readSummary(out);
    const reviewTasks = summary.tasks.filter((t) => t.agent === "reviewer");
    const ran = reviewTasks.filter((t) => t.attempts > 0);
    const stopped = reviewTasks.filter((t) => t.attempts === 0);
    expect(new Set(ran.map((t) => t.host)), "both hosts ran reviews").toEqual(new Set(["a", "b"]));
    expect(ran.length).toBeLessThanOrEqual(5);
    expect(stopped.length).toBeGreaterThanOrEqual(3);
    for (const task of stopped) {
      expect(task.status).toBe("skipped");
      expect(task.error).toMatchObject({ code: "BUDGET_EXCEEDED", budget: `agent reviewer, $${budgetUsd}` });
    }
    const costliest = Math.max(...ran.map((t) => t.cost_usd));
    expect(summary.totals.by_agent?.reviewer?.cost_usd).toBeLessThanOrEqual(budgetUsd + 2 * costliest);
    for (const task of summary.tasks.filter((t) => t.agent === "fixer")) expect(task.status, task.error?.message).toBe("succeeded");
    for (const host of hosts) await host.waitFor(/run \S+: ended/);
  }, 240_000);
});
