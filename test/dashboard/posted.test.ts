// Tasks agents posted, on the dashboard (a real Chromium): examples/posted-tasks.yaml under `cadre run --ui` live and
// finished, then under `cadre ui` from its record: each posted row names the task that posted it, and links to its row.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { cadre, readSummary, repo } from "../support/cli.ts";
import { launchBrowser, openPage, SHOTS, startCadre } from "../support/dashboard.ts";

const POSTED = { "fix-cache": "lead", "fix-retry": "lead", "fix-slug": "lead" };

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-dashboard-posted-"));
  // The example as it is, but fix-cache answers only after ten seconds: the page sees the posted rows while the run is live.
  const example = parse(await readFile(join(repo, "examples", "posted-tasks.yaml"), "utf8"));
  example.rehearsal["fix-cache"][0].delay_ms = 10_000;
  await writeFile(join(dir, "slow-posted.yaml"), stringify(example));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each row's name → the poster its "Posted by" cell links to (null: no link), and whether that column shows. */
async function posters(page: Page): Promise<{ column: boolean; rows: Record<string, string | null> }> {
  const rows = await page.$$eval("#tasks tbody tr[data-key]", (trs: any[]) =>
    Object.fromEntries(
      trs.map((tr) => {
        const link = tr.querySelector("td.posted button.poster");
        return [tr.querySelector("button.row-name").textContent, link?.textContent ?? null];
      }),
    ),
  );
  return { column: await page.locator("th.posted").isVisible(), rows };
}

/** The table's row of the task `name`. */
const rowOf = (page: Page, name: string) => page.locator("#tasks tbody tr[data-key]", { has: page.locator(`button.row-name:text-is("${name}")`) });

const selected = (page: Page) => page.$$eval("#tasks tbody tr.selected button.row-name", (buttons: any[]) => buttons.map((b) => b.textContent));

/** Each posted row names the lead; the lead's link, and the detail's, select the lead's row. */
async function expectPosters(page: Page): Promise<void> {
  expect(await posters(page)).toEqual({ column: true, rows: { lead: null, ...POSTED } });
  // The link in the table selects the poster's row.
  await rowOf(page, "fix-retry").locator("td.posted button.poster").click();
  await expect.poll(() => selected(page)).toEqual(["lead"]);
  await expect.poll(() => page.locator("#row-origin").isHidden()).toBe(true);
  // A posted row's detail says who posted it, and links to it.
  await rowOf(page, "fix-slug").locator("td.agent").click();
  await expect.poll(() => selected(page)).toEqual(["fix-slug"]);
  await page.locator("#row-origin", { hasText: "Posted by lead" }).waitFor();
  await page.locator("#row-poster").click();
  await expect.poll(() => selected(page)).toEqual(["lead"]);
  expect(await page.locator("#conversation-name").textContent()).toBe("of lead");
}

describe("posted tasks on the dashboard", () => {
  it("cadre run --ui: each posted row names its poster while the run is live and once it has finished", async () => {
    const outDir = join(dir, "runs", "live");
    const served = await startCadre(["run", "slow-posted.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: dir });
    const page = await openPage(browser, served.url);
    // Live: fix-cache is still answering.
    await rowOf(page, "fix-cache").and(page.locator('[data-status="running"]')).waitFor({ timeout: 30_000 });
    await rowOf(page, "fix-slug").waitFor();
    await expectPosters(page);
    expect(await page.locator("#run-state").textContent()).toBe("live");
    await page.screenshot({ path: join(SHOTS, "posted-live.png"), fullPage: true });

    // Finished: the rows with the record's figures still name their poster.
    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 60_000 });
    await expectPosters(page);
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(0);
  }, 120_000);

  it("cadre ui: a finished run's record shows each posted row's poster, as summary.json names it", async () => {
    const outDir = join(dir, "runs", "recorded");
    const run = await cadre(["run", join(repo, "examples", "posted-tasks.yaml"), "--rehearse", "--out", outDir], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = await readSummary(outDir);
    expect(Object.fromEntries(summary.tasks.map((task) => [task.name, task.posted_by ?? null]))).toEqual({ lead: null, ...POSTED });

    const served = await startCadre(["ui", join(dir, "runs")], { cwd: dir });
    const page = await openPage(browser, `${served.origin}/?run=recorded#token=${served.token}`);
    await page.locator("#run-state", { hasText: "recorded run" }).waitFor();
    await expectPosters(page);
    await page.screenshot({ path: join(SHOTS, "posted-record.png"), fullPage: true });
    served.process.kill("SIGINT");
    expect((await served.process).exitCode).toBe(0);
  }, 120_000);
});
