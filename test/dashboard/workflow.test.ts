// A workflow script's run on the dashboard (a real Chromium): `cadre run script.js --ui` live, then `cadre ui` on its
// summary.json: a row per agent() call with its label, phase, status and cost, and the script's result and logs.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { launchBrowser, openPage, SHOTS, startCadre, tableStatuses } from "../support/dashboard.ts";

const SCRIPT = `export const meta = { name: "paged", description: "a workflow on the dashboard", phases: [{ title: "Find" }, { title: "Check" }] }
phase("Find")
const found = await parallel([() => agent("find one", { label: "find-1" }), () => agent("find two", { label: "find-2" })])
log("found " + found.length)
const checked = await agent("check them", { label: "check", phase: "Check" })
return { found, checked }
`;

/** The finders answer after two seconds, so that the page sees them run. */
const REHEARSAL = `find-1: [{ text: one found, delay_ms: 2000 }]
find-2: [{ text: two found, delay_ms: 2000 }]
check: [{ text: all checked }]
`;

const RESULT = { found: ["one found", "two found"], checked: "all checked" };

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-dashboard-wf-"));
  await writeFile(join(dir, "paged.js"), SCRIPT);
  await writeFile(join(dir, "paged.rehearsal.yaml"), REHEARSAL);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each row's name → [phase, status, cost] as the table shows them. */
function tableCells(page: Page): Promise<Record<string, string[]>> {
  return page.$$eval("#tasks tbody tr[data-key]", (rows: any[]) =>
    Object.fromEntries(
      rows.map((tr) => [
        tr.querySelector("button").textContent,
        [tr.querySelector("td.phase").textContent, tr.dataset.status, tr.querySelector("td.cost").textContent],
      ]),
    ),
  );
}

async function expectFinished(page: Page, costs: Record<string, number>): Promise<void> {
  const cells = await tableCells(page);
  expect(Object.keys(cells).sort()).toEqual(["check", "find-1", "find-2"]);
  expect(cells["find-1"]!.slice(0, 2)).toEqual(["Find", "succeeded"]);
  expect(cells["find-2"]!.slice(0, 2)).toEqual(["Find", "succeeded"]);
  expect(cells.check!.slice(0, 2)).toEqual(["Check", "succeeded"]);
  // The cost as the page prints it (~$0.0176: simulated, four places) is the row's in summary.json.
  for (const [name, [, , cost]] of Object.entries(cells)) expect(Number(cost!.replace(/^~?\$/, "")), name).toBeCloseTo(costs[name]!, 4);
  expect(await page.locator("th.phase").isVisible()).toBe(true);
  expect(JSON.parse((await page.locator("#workflow-result").textContent()) ?? "")).toEqual(RESULT);
  expect(await page.locator("#workflow-logs li").allTextContents()).toEqual(["found 2"]);
  expect(await page.locator("#workflow-error").isHidden()).toBe(true);
}

describe("a workflow script's run on the dashboard", () => {
  it("cadre run script.js --ui shows each agent() call's row with its phase as it runs, then the script's result; cadre ui shows the record alike", async () => {
    const outDir = join(dir, "runs", "live");
    const served = await startCadre(["run", "paged.js", "--rehearse", "--ui", "--out", outDir], { cwd: dir });
    const page = await openPage(browser, served.url);

    // While the finders run: their rows, in the Find phase; the script has not returned.
    await page.locator('tr[data-key="t:find-1"][data-status="running"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('tr[data-key="t:find-1"] td.phase').textContent()).toBe("Find");
    expect(await page.locator("#workflow-section").isVisible()).toBe(true);
    expect(await page.locator("#workflow-result").textContent()).toBe("(the script has not returned yet)");
    await page.screenshot({ path: join(SHOTS, "workflow-running.png"), fullPage: true });

    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 90_000 });
    const summary = await readSummary(outDir);
    const costs = Object.fromEntries(summary.tasks.map((row) => [row.name, row.cost_usd]));
    await expectFinished(page, costs);
    await page.screenshot({ path: join(SHOTS, "workflow-finished.png"), fullPage: true });
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(0);

    const ui = await startCadre(["ui", join(dir, "runs")], { cwd: dir });
    const recordPage = await openPage(browser, `${ui.origin}/?run=live#token=${ui.token}`);
    await recordPage.locator("#run-state", { hasText: "recorded run" }).waitFor();
    expect(await tableStatuses(recordPage)).toEqual({ "t:find-1": "succeeded", "t:find-2": "succeeded", "t:check": "succeeded" });
    await expectFinished(recordPage, costs);
    expect(await recordPage.locator("#run-title").textContent()).toBe("paged");
  }, 240_000);
});
