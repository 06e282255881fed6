// The dashboard on first paint, in a real headless Chromium: a page that waits for `load` (as a
// screenshot on load does) already shows the run's rows, and a wrong token still shows its error.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, SHOTS, startCadre, tableKeys } from "../support/dashboard.ts";

const task = (name: string) => ({
  name,
  agent: "worker",
  status: "succeeded",
  cost_usd: 0.01,
  num_turns: 1,
  duration_ms: 1000,
  attempts: 1,
  error: null,
});
const OLDER = "2026-01-01T10-00-00Z";
const NEWER = "2026-01-02T10-00-00Z";

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-first-paint-"));
  for (const [id, swarm, names] of [
    [OLDER, "older", ["one"]],
    [NEWER, "newer", ["alpha", "beta", "gamma"]],
  ] as const) {
    await mkdir(join(dir, id), { recursive: true });
    await writeFile(join(dir, id, "summary.json"), JSON.stringify({ swarm, tasks: names.map(task), totals: { succeeded: names.length } }));
  }
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the dashboard's first paint", () => {
  it("shows the run's rows once the page has loaded, before its state stream says anything", async () => {
    const served = await startCadre(["ui", dir], { cwd: dir });
    const page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
    const requests: string[] = [];
    page.on("request", (request) => requests.push(new URL(request.url()).pathname));
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    // The rows the table has when the load event fires: a screenshot on load can come at once after it.
    await page.addInitScript(() => {
      const window = globalThis as any;
      window.addEventListener("load", () => {
        window.rowsAtLoad = [...window.document.querySelectorAll("#tasks tbody tr[data-key]")].map((tr: any) => tr.dataset.key);
      });
    });
    await page.goto(served.url);
    expect(await page.evaluate(() => (globalThis as any).rowsAtLoad)).toEqual(["t:alpha", "t:beta", "t:gamma"]);
    // No waiting: what `load` shows is what a screenshot on load catches.
    expect(await tableKeys(page)).toEqual(["t:alpha", "t:beta", "t:gamma"]);
    expect(await page.locator("#run-title").textContent()).toBe("newer");
    await page.screenshot({ path: join(SHOTS, "first-paint.png"), fullPage: true });
    // The snapshot came before the state stream was opened: the stream's snapshot replaces it, never the other way.
    const firstPaint = requests.indexOf("/api/first-paint.js");
    expect(firstPaint).toBeGreaterThan(-1);
    expect(requests.indexOf(`/api/runs/${NEWER}/state`)).toBeGreaterThan(firstPaint);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the run the address names on load, and the first when it names none there is", async () => {
    const served = await startCadre(["ui", dir], { cwd: dir });
    const older = await openPage(browser, `${served.origin}/?run=${OLDER}#token=${served.token}`);
    expect(await tableKeys(older)).toEqual(["t:one"]);
    const missing = await openPage(browser, `${served.origin}/?run=nope#token=${served.token}`);
    expect(await tableKeys(missing)).toEqual(["t:alpha", "t:beta", "t:gamma"]);
  });

  it("with a wrong token, the page still loads and says why it shows nothing", async () => {
    const served = await startCadre(["ui", dir], { cwd: dir });
    const page = await openPage(browser, `${served.origin}/#token=wrong`);
    await page.locator("#notice", { hasText: "Cannot list the runs" }).waitFor();
    expect(await tableKeys(page)).toEqual([]);
  });
});
