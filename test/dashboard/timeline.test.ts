// The dashboard's timeline and table in real Chromium at a laptop's 1400 px: a for_each's copies have their lanes,
// folded with their group as the table folds it and opened with it; the table fits without sideways scroll.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repo } from "../support/cli.ts";
import { launchBrowser, openPage, SHOTS, startCadre } from "../support/dashboard.ts";

let browser: Browser;
let dir: string;
beforeAll(async () => {
  browser = await launchBrowser();
  dir = await mkdtemp(join(tmpdir(), "cadre-timeline-"));
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the dashboard's timeline", () => {
  it("plan-map-reduce: the three fixers the plan made are on the timeline, folded in their group and opened with it; the table fits 1400 px", async () => {
    const served = await startCadre(["run", "examples/plan-map-reduce.yaml", "--rehearse", "--ui", "--out", join(dir, "run")], { cwd: repo });
    const page = await openPage(browser, served.url);
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 120_000 });

    // Folded: one lane for the group of copies (after the for_each task's own lane, which settles as their list), holding
    // the bars of its three copies, each ending in a dot.
    const lanes = () => page.locator("#timeline .lane").evaluateAll((nodes: any[]) => nodes.map((node) => node.dataset.name));
    expect(await lanes()).toEqual(["plan", "fix", "merge", "fix"]);
    const group = page.locator('#timeline .lane.group[data-name="fix"]');
    expect(await group.locator(".track").getAttribute("aria-label")).toBe("fix: 3 copies, 3 succeeded");
    expect(await group.locator(".bar.end.status-succeeded").count()).toBe(3);
    await page.screenshot({ path: join(SHOTS, "timeline-folded.png"), fullPage: true });

    // Opened in the table: the timeline opens it too, a lane per copy.
    await page.locator('tr.group[data-group="fix"] button').click();
    await page.locator("#timeline .lane.in-group").first().waitFor();
    expect(await lanes()).toEqual(["plan", "fix", "merge", "fix", "fix-0", "fix-1", "fix-2"]);
    for (const name of ["fix-0", "fix-1", "fix-2"])
      expect(await page.locator(`#timeline .lane.in-group[data-name="${name}"] .bar.status-running`).count(), name).toBeGreaterThan(0);
    await page.screenshot({ path: join(SHOTS, "timeline-open.png"), fullPage: true });

    // The table fits its box: no sideways scroll, its last column in view.
    const fit = await page.locator("#tasks-wrap").evaluate((wrap: any) => ({
      scroll: wrap.scrollWidth,
      box: wrap.clientWidth,
      lastColumnEnd: wrap.querySelector("thead th:last-child").getBoundingClientRect().right,
      boxEnd: wrap.getBoundingClientRect().right,
    }));
    expect(fit.scroll).toBeLessThanOrEqual(fit.box);
    expect(fit.lastColumnEnd).toBeLessThanOrEqual(fit.boxEnd + 0.5);
    served.process.kill("SIGINT");
    expect((await served.process).exitCode).toBe(0);
  }, 240_000);
});
