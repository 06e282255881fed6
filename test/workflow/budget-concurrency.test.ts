// A workflow script's --budget-usd (the run's budget) over thirty agent() calls in parallel() at concurrency 10, on the
// real CLI: the reply that crossed the line reached it, and no call went on past the reply it was being given.
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadRehearsalScripts, type RunEvent, runWorkflow } from "../../src/index.ts";
import { PriceBook } from "../../src/orchestrator/price-book.ts";

const BUDGET_USD = 0.3;
const CONCURRENCY = 10;
/** Each call: twelve tool calls and the answer, each reply 60 ms in coming. */
const STEPS = [
  ...Array.from({ length: 12 }, (_, i) => `  - tool_use: { name: Glob, input: { pattern: "*.nothing${i}" } }\n    delay_ms: 60\n`),
  '  - text: "done"\n    delay_ms: 60\n',
].join("");
const REPLIES = loadRehearsalScripts(`"call-{{n}}":\n${STEPS}`);

const SCRIPT = `export const meta = { name: "fan", description: "thirty agents at once" }
return await parallel(Array.from({ length: 30 }, (_, i) => () => agent("work " + (i + 1), { label: "call-" + (i + 1) })))
`;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("a workflow's --budget-usd under concurrency", () => {
  it("thirty calls in parallel() stop within the replies in flight when it is reached", { timeout: 120_000 }, async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "cadre-wf-budget-")));
    const prices = new PriceBook();
    // Every reply the run read, in order, priced as the CLI prices it.
    const read: Array<{ task: string; usd: number }> = [];
    const onEvent = (event: RunEvent) => {
      if (event.type === "task_message" && event.message.type === "assistant")
        read.push({ task: event.task.id, usd: prices.price(event.message, true) });
    };
    const { summary } = await runWorkflow(SCRIPT, {
      outDir: join(dir, "run"),
      cwd: dir,
      rehearsal: REPLIES,
      concurrency: CONCURRENCY,
      budgetUsd: BUDGET_USD,
      onEvent,
    });
    const spent = summary.totals.cost_usd;
    // The reply that took what was read past the budget: the line, as the run counted it.
    const totals = read.map((_, i) => read.slice(0, i + 1).reduce((sum, r) => sum + r.usd, 0));
    const crossing = totals.findIndex((total) => total >= BUDGET_USD);
    const before = read.slice(0, crossing);
    const after = read.slice(crossing);
    const perCall = new Map<string, number>();
    for (const r of after) perCall.set(r.task, (perCall.get(r.task) ?? 0) + 1);
    const costliest = Math.max(...after.map((r) => r.usd));
    console.log(
      JSON.stringify({
        budgetUsd: BUDGET_USD,
        spent,
        calls: read.length,
        readUsd: before.reduce((s, r) => s + r.usd, 0),
        readAfter: after.length,
        mostOfOneCall: Math.max(...perCall.values()),
        costliest,
      }),
    );

    expect(crossing, "the budget was reached").toBeGreaterThan(0);
    expect(
      before.reduce((sum, r) => sum + r.usd, 0),
      "counted as the replies came",
    ).toBeLessThan(BUDGET_USD);
    expect(Math.max(...perCall.values()), "no call read more than the reply it was given and one its interrupt cut").toBeLessThanOrEqual(2);
    expect(spent).toBeLessThanOrEqual(BUDGET_USD + 2 * CONCURRENCY * costliest);
    const rows = summary.tasks as Array<{ status: string; error: { code: string } | null }>;
    expect(rows.some((row) => row.error?.code === "BUDGET_EXCEEDED")).toBe(true);
  });
});
