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

const steps: Array<{ tool_use?: { name: string; input: { command: string } }; text?: string; delay_ms: number }> = [
  ...Array.from({ length: CALLS - 1 }, (_, i) => ({ tool_use: { name: "Bash", input: { command: `echo step ${i}` } }, delay_ms: REPLY_MS })),
  { text: "done", delay_ms: REPLY_MS },
];

type Played = RehearsalServer["requests"][number];

/**
 * The calls of the work under a budget, split at the reply that reached it: those read
 * before (cadre had counted them) and those not read yet (that reply, the replies being
 * generated, and any call a process sent before its interrupt arrived). Each call priced
 * as the CLI prices it: the model's list price, its output the step's reply.
 */
function measure(played: Played[], readBeforeReach: ReadonlySet<string>) {
  const prices = new PriceBook();
  const usd = (r: Played) => {
    const step = steps[r.step ?? 0]!;
    const content = [
      step.tool_use
        ? { type: "tool_use" as const, id: "", name: "Bash", input: step.tool_use.input }
        : { type: "text" as const, text: step.text ?? "" },
    ];
    return prices.price({ type: "assistant", message: { role: "assistant", model: r.model, content, usage: r.usage as unknown as ApiUsage } }, true);
  };
  const sum = (calls: Played[]) => calls.reduce((total, r) => total + usd(r), 0);
  const unread = played.filter((r) => !readBeforeReach.has(r.messageId ?? ""));
  const perProcess = new Map<string, number>();
  for (const r of unread) perProcess.set(r.sessionId ?? "", (perProcess.get(r.sessionId ?? "") ?? 0) + 1);
  return {
    calls: played.length,
    modelUsd: sum(played),
    readUsd: sum(played.filter((r) => readBeforeReach.has(r.messageId ?? ""))),
    unread: unread.length,
    unreadUsd: sum(unread),
    mostUnreadOfOneProcess: Math.max(0, ...perProcess.values()),
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
  // The replies cadre had read (and counted) before the one that reached the budget.
  const readBeforeReach = new Set<string>();
  let last = "";
  orchestrator.on((event: OrchestratorEvent) => {
    if (event.type === "budget_exceeded" && reachedAt === undefined) {
      reachedAt = Date.now();
      readBeforeReach.delete(last);
    } else if (event.type === "task_message" && event.message.type === "assistant" && reachedAt === undefined) {
      last = event.message.message.id ?? "";
      readBeforeReach.add(last);
    }
  });
  const results = await collect(orchestrator.map(tasks));
  return { server, orchestrator, results, reachedAt, readBeforeReach };
}

const tasks = (count: number, extra: Partial<TaskSpec> = {}) =>
  Array.from({ length: count }, (_, i) => ({ name: `t${i + 1}`, prompt: `work ${i + 1}`, ...extra }));

/** The run spent within the bound of the budget that stopped it; the figures are printed for docs/budgets.md. */
async function expectWithinBound(
  budget: string,
  budgetUsd: number,
  run: Awaited<ReturnType<typeof runUnder>>,
  spentUsd: number,
  under: (request: Played) => boolean = () => true,
) {
  const played = run.server.requests.filter((r) => r.outcome === "played" && r.usage !== undefined && under(r));
  const figures = measure(played, run.readBeforeReach);
  console.log(JSON.stringify({ budget, budgetUsd, spentUsd, ...figures }));
  expect(run.reachedAt, "the budget was reached").toBeDefined();
  expect(figures.readUsd, "counted as the replies came: the reply that crossed the line reached it").toBeLessThan(budgetUsd);
  expect(figures.mostUnreadOfOneProcess, "a process made no more than its call in flight and one its interrupt cut").toBeLessThanOrEqual(2);
  const stopped = run.results.filter((r) => r.error?.code === "BUDGET_EXCEEDED");
  expect(stopped.length, "the budget stopped tasks").toBeGreaterThan(0);
  for (const result of stopped) expect(result.error?.budget).toMatch(new RegExp(`^${budget}, \\$`));
  expect(spentUsd).toBeLessThanOrEqual(budgetUsd + figures.unreadUsd + 1e-9);
}

describe("budgets under concurrency", () => {
  it("the run's budget: ten at once stop within the calls in flight when it is reached", async () => {
    const run = await runUnder({ budgetUsd: 0.3 }, tasks(20));
    await expectWithinBound("run", 0.3, run, run.orchestrator.totals.costUsd);
  }, 120_000);

  it("an agent's budget, the same; another agent's work goes on", async () => {
    const agents = {
      worker: { description: "a worker", prompt: "You work.", budgetUsd: 0.3 },
      other: { description: "another", prompt: "You help." },
    };
    const run = await runUnder({ agents }, [...tasks(20, { agent: "worker" }), ...tasks(1, { name: "other", agent: "other" })]);
    const spent = run.results.filter((r) => r.name !== "other").reduce((sum, r) => sum + r.costUsd, 0);
    await expectWithinBound("agent worker", 0.3, run, spent, (request) => request.system.includes("You work."));
    expect(run.results.find((r) => r.name === "other")?.status).toBe("succeeded");
  }, 120_000);

  it("a task's budget shared by twenty tasks (as a loop's rounds share theirs), the same", async () => {
    const run = await runUnder({}, tasks(20, { budgetUsd: 0.3, budgetName: "shared" }));
    await expectWithinBound("task shared", 0.3, run, run.orchestrator.totals.costUsd);
  }, 120_000);
});
