// Budgets under concurrency on the real CLI: ten processes at once spend the run's, an agent's and a task's budget within the documented bound.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent, OrchestratorOptions, TaskSpec } from "../../src/orchestrator/index.ts";
import { PriceBook } from "../../src/orchestrator/price-book.ts";
import type { ApiUsage } from "../../src/protocol/index.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { collect } from "../support/streams.ts";

const CONCURRENCY = 10;
/** Model calls per task: twelve tool calls and the answer. */
const CALLS = 13;
/** Each reply takes this long to arrive: the time a call is "being generated". */
const REPLY_MS = 60;

const steps = [
  ...Array.from({ length: CALLS - 1 }, (_, i) => ({ tool_use: { name: "Bash", input: { command: `echo step ${i}` } }, delay_ms: REPLY_MS })),
  { text: "done", delay_ms: REPLY_MS },
];

/**
 * What the run spent against its bound: the budget, plus the calls in flight when it was
 * reached (sent to the model, their replies not read yet; and any a process sent before
 * its interrupt arrived), at most one for each process at work. Each call is priced at
 * the model's list price, as the CLI prices it.
 */
function measure(server: RehearsalServer, readBeforeReach: ReadonlySet<string>, reachedAt: number | undefined) {
  const prices = new PriceBook();
  const played = server.requests.filter((r) => r.outcome === "played" && r.usage !== undefined);
  const usd = (r: (typeof played)[number]) =>
    prices.price({ type: "assistant", message: { role: "assistant", model: r.model, content: [], usage: r.usage as unknown as ApiUsage } }, true);
  const inFlight = reachedAt === undefined ? [] : played.filter((r) => !readBeforeReach.has(r.messageId ?? ""));
  return {
    calls: played.length,
    modelUsd: played.reduce((sum, r) => sum + usd(r), 0),
    inFlight: inFlight.length,
    sentAfterReach: played.filter((r) => reachedAt !== undefined && r.at > reachedAt).length,
    inFlightUsd: inFlight.reduce((sum, r) => sum + usd(r), 0),
  };
}

async function runUnder(options: OrchestratorOptions, tasks: TaskSpec[]) {
  const server = await createRehearsal({ work: steps });
  const { orchestrator } = await rehearsedOrchestrator(server, {
    concurrency: CONCURRENCY,
    // The hard limit alone: the forecast would hold tasks earlier.
    budgetForecast: false,
    script: () => "work",
    defaults: { allowedTools: ["Bash"] },
    ...options,
  });
  let reachedAt: number | undefined;
  // The replies cadre had read (and counted) when the budget was reached.
  const readBeforeReach = new Set<string>();
  orchestrator.on((event: OrchestratorEvent) => {
    if (event.type === "budget_exceeded") reachedAt ??= Date.now();
    else if (event.type === "task_message" && event.message.type === "assistant" && reachedAt === undefined)
      readBeforeReach.add(event.message.message.id ?? "");
  });
  const results = await collect(orchestrator.map(tasks));
  return { server, orchestrator, results, reachedAt, readBeforeReach };
}

const tasks = (count: number, extra: Partial<TaskSpec> = {}) =>
  Array.from({ length: count }, (_, i) => ({ name: `t${i + 1}`, prompt: `work ${i + 1}`, ...extra }));

describe("budgets under concurrency", () => {
  it("the run's budget: ten at once stop within the calls in flight when it is reached", async () => {
    const budgetUsd = 0.3;
    const { server, orchestrator, results, reachedAt, readBeforeReach } = await runUnder({ budgetUsd }, tasks(20));
    const spent = orchestrator.totals.costUsd;
    const figures = measure(server, readBeforeReach, reachedAt);
    console.log(JSON.stringify({ budgetUsd, spent, ...figures, statuses: results.map((r) => `${r.status}:${r.costUsd.toFixed(4)}`) }));
    expect(orchestrator.totals.budgetExceeded).toBe(true);
    expect(results.some((r) => r.status === "cancelled" && r.error?.code === "BUDGET_EXCEEDED")).toBe(true);
    expect(spent).toBeLessThanOrEqual(budgetUsd + figures.inFlightUsd + 1e-9);
    expect(figures.inFlight).toBeLessThanOrEqual(CONCURRENCY);
  }, 120_000);
});
