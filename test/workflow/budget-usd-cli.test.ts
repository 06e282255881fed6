// `cadre run script.js --rehearse --budget-usd`: real claude workers against the scripted model spend the run's
// dollars (simulated costs), the script's budget.usd.remaining() falls as they do, and the agent() past the
// budget throws naming it (parallel() makes it null). The runner's part alone is in budget-usd.test.ts.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

const SCRIPT = `export const meta = { name: "spend", description: "agents until the dollars run out" }
const left = [budget.usd.remaining()]
let thrown = null
for (let i = 1; i <= 20; i++) {
  try {
    await agent("step " + i, { label: "step-" + i })
  } catch (error) {
    thrown = error.message
    break
  }
  left.push(budget.usd.remaining())
}
const late = await parallel([() => agent("one more", { label: "late" })])
return { left, thrown, late, spent: budget.usd.spent(), tokens: budget.total }
`;

const REPLIES = `"step-{{n}}":
  - text: "done {{task}}"
late:
  - text: "never asked"
`;

describe("a workflow script under --budget-usd", () => {
  it("sees what is left fall as its agents spend, and its agent() past the budget throws naming it", { timeout: 240_000 }, async ({ tmp }) => {
    const script = join(tmp, "spend.js");
    await writeFile(script, SCRIPT);
    await writeFile(join(tmp, "spend.rehearsal.yaml"), REPLIES);
    const out = join(tmp, "out");
    // The first one-turn agent writes the prompt cache (about $0.12), each later one about $0.02. Once what is left
    // is less than their median cost, the next is held before it starts (the forecast): that too is the budget's doing.
    const run = await cadre(["run", script, "--rehearse", "--budget-usd", "0.26", "--out", out]);
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
    const result = summary.result as { left: number[]; thrown: string | null; late: unknown[]; spent: number; tokens: number | null };

    expect(result.left[0]).toBe(0.26);
    expect(result.left.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < result.left.length; i++) expect(result.left[i]).toBeLessThan(result.left[i - 1]!);
    expect(result.left.at(-1)).toBeLessThan(0.03);
    expect(result.thrown).toMatch(/^budget_exceeded: run, \$0\.26: /);
    expect(result.late).toEqual([null]);
    expect(result.tokens).toBeNull();
    expect(result.spent).toBeCloseTo(0.26 - result.left.at(-1)!, 6);

    // The agents that ran succeeded and are what the run spent; the ones the budget kept from starting say so.
    const rows = summary.tasks as { name: string; status: string; error: { code: string; message: string } | null }[];
    const succeeded = rows.filter((row) => row.status === "succeeded").map((row) => row.name);
    expect(succeeded).toEqual(Array.from({ length: result.left.length - 1 }, (_, i) => `step-${i + 1}`));
    for (const row of rows.filter((row) => row.status !== "succeeded")) expect(row.error?.message).toMatch(/^budget_exceeded: run, \$0\.26/);
    expect(summary.budget_usd).toBe(0.26);
    expect(summary.totals.cost_usd).toBeCloseTo(result.spent, 6);
    expect(summary.logs).toEqual([expect.stringMatching(/^parallel\[0\] failed: budget_exceeded: run, \$0\.26/)]);
  });

  it("refuses a --budget-usd that is not a positive number of dollars", async () => {
    const run = await cadre(["run", "examples/workflows/fan-out.js", "--rehearse", "--budget-usd", "0"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--budget-usd wants a number of dollars above 0, got "0"/);
  });
});
