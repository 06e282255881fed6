// The run's budget on two `cadre worker` hosts, five processes each: counted in Redis as the replies arrive, it stops
// the work on both within the calls in flight when it is reached.
import { describe, expect, it } from "vitest";
import { PriceBook } from "../../src/orchestrator/price-book.ts";
import type { ApiUsage } from "../../src/protocol/index.ts";
import { readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const BUDGET_USD = 0.3;
/** Processes at work over both hosts. */
const PROCESSES = 10;
/** A cache write of the system prompt: a process's first call, before any budget is near. */
const PROMPT_WRITE = 10_000;

const steps = [
  ...Array.from({ length: 12 }, (_, i) => ({ tool_use: { name: "Glob", input: { pattern: `*.nothing${i}` } }, delay_ms: 60 })),
  { text: "done", delay_ms: 60 },
];

describe("the run's budget on two hosts under concurrency", () => {
  it("twenty tasks of 13 calls, five at once on each host, stop within the calls in flight", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ fleet: steps });
    for (const name of ["a", "b"]) await startHost(redis, model, { name, script: "fleet", concurrency: PROCESSES / 2 });
    const file = await swarmFile([
      "name: fleet-spend",
      `concurrency: ${PROCESSES}`,
      "budget_forecast: false",
      `budget_usd: ${BUDGET_USD}`,
      "tasks:",
      ...Array.from({ length: 20 }, (_, i) => `  - { name: t${i + 1}, prompt: work ${i + 1} }`),
    ]);
    const out = `${await tempHome("cadre-out-")}/run`;
    const run = await runDistributed(file, redis, out);
    expect(run.exitCode, run.stderr + run.stdout).toBe(1);
    const summary = await readSummary(out);

    // Each call priced as the CLI prices it, in the order the model answered them: the line is crossed at the reply
    // that took their sum past the budget. Past it, each process may finish the call it was making and have one more
    // cut by its interrupt (a third, on a loaded machine, sent while the news crossed Redis); before, each ran all 13.
    const prices = new PriceBook();
    const played = model.requests
      .filter((r) => r.outcome === "played" && r.usage !== undefined)
      .sort((a, b) => (a.respondedAt ?? Infinity) - (b.respondedAt ?? Infinity));
    const usd = played.map((r) =>
      prices.price({ type: "assistant", message: { role: "assistant", model: r.model, content: [], usage: r.usage as unknown as ApiUsage } }, true),
    );
    const totals = usd.map((_, i) => usd.slice(0, i + 1).reduce((sum, u) => sum + u, 0));
    const crossedAt = played[totals.findIndex((total) => total >= BUDGET_USD)]?.respondedAt ?? Infinity;
    const pastTheLine = new Map<string, number>();
    for (const r of played.filter((r) => r.at > crossedAt)) pastTheLine.set(r.sessionId ?? "", (pastTheLine.get(r.sessionId ?? "") ?? 0) + 1);
    const spent = summary.totals.cost_usd;
    const mostOfOneProcess = Math.max(0, ...pastTheLine.values());
    console.log(JSON.stringify({ budgetUsd: BUDGET_USD, spent, calls: played.length, modelUsd: totals.at(-1), mostOfOneProcess }));
    expect(crossedAt, "the budget was reached").toBeLessThan(Infinity);
    expect(summary.tasks.some((t) => t.error?.code === "BUDGET_EXCEEDED")).toBe(true);
    expect(mostOfOneProcess).toBeLessThanOrEqual(3);
    expect(spent).toBeLessThanOrEqual(
      BUDGET_USD + 2 * PROCESSES * Math.max(...usd.filter((_, i) => (played[i]!.usage?.cache_creation_input_tokens ?? 0) < PROMPT_WRITE)),
    );
  }, 240_000);
});
