// `cadre ui` of a run of ten thousand tasks, in a real headless Chromium: the record is made here
// (no workers), the table draws only what is on screen, scrolls to the end, folds a for_each's
// copies into one row, and filters by status and agent and searches by name.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, SHOTS, startCadre, tableKeys } from "../support/dashboard.ts";

const TASKS = 10_000;
/** The first 9,000 are copies of one for_each task; the rest are plain tasks, checked and fixed by turns. */
const COPIES = 9_000;
const T0 = Date.parse("2026-02-01T09:00:00Z");

const nameOf = (i: number) => (i < COPIES ? `review-file-${i}` : `check-${i - COPIES}`);
const agentOf = (i: number) => (i < COPIES ? "reviewer" : i % 2 === 0 ? "fixer" : "checker");
const statusOf = (i: number) => (i % 10 === 7 ? "failed" : i % 50 === 1 ? "cancelled" : "succeeded");

/** A summary.json as cadre writes it, with every field a task has (some 800 bytes each). */
function record(): unknown {
  const usage = { input_tokens: 12, output_tokens: 40, cache_creation_input_tokens: 900, cache_read_input_tokens: 14_000 };
  const tasks = Array.from({ length: TASKS }, (_, i) => {
    const status = statusOf(i);
    const started = T0 + i * 50;
    return {
      name: nameOf(i),
      ...(i < COPIES && { template: "review-{{item}}" }),
      agent: agentOf(i),
      status,
      text: status === "succeeded" ? `reviewed ${nameOf(i)}: nothing to change` : "",
      structured_output: null,
      cost_usd: 0.0021,
      usage,
      num_turns: 1,
      queued_ms: 30,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(started + 900).toISOString(),
      duration_ms: 900,
      attempts: 1,
      session_id: `0b6c9a52-3f1e-4c1a-9d7e-${String(i).padStart(12, "0")}`,
      depends_on: [],
      transcript: null,
      error: status === "failed" ? { code: "TASK_FAILED", message: `the model gave up on ${nameOf(i)}` } : null,
      fingerprint: { prompt: "3f9a0c1d2e4b5a6978877665544332211", settings: "9d8c7b6a5f4e3d2c1b0a" },
    };
  });
  const count = (status: string) => tasks.filter((task) => task.status === status).length;
  return {
    swarm: "ten-thousand",
    run_id: "20260201-090000-big",
    config: "swarm.yaml",
    rehearsal: false,
    cost_simulated: false,
    started_at: new Date(T0).toISOString(),
    finished_at: new Date(T0 + TASKS * 50 + 900).toISOString(),
    duration_ms: TASKS * 50 + 900,
    interrupted: false,
    complete: true,
    exit_code: 1,
    totals: {
      tasks: TASKS,
      succeeded: count("succeeded"),
      failed: count("failed"),
      cancelled: count("cancelled"),
      skipped: 0,
      cost_usd: 0.0021 * TASKS,
      num_turns: TASKS,
      usage,
      cache_saved_usd: 1,
    },
    tasks,
    sessions: [],
  };
}

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-scale-"));
  await mkdir(join(dir, "runs", "big"), { recursive: true });
  await writeFile(join(dir, "runs", "big", "summary.json"), JSON.stringify(record(), null, 2));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Rows in the page: a few screens' worth, whatever the run's size. */
const drawnRows = (page: Page) => page.locator("#tasks tbody tr").count();

async function scrollTable(page: Page, to: "end" | number): Promise<void> {
  await page.evaluate((where) => {
    const wrap = (globalThis as any).document.getElementById("tasks-wrap");
    wrap.scrollTop = where === "end" ? wrap.scrollHeight : where;
  }, to);
  // The table draws on the next animation frame.
  await page.evaluate(() => new Promise((resolve) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).setTimeout(resolve, 0))));
}

async function filterBy(page: Page, filter: { status?: string; agent?: string; query?: string }): Promise<void> {
  await page.locator("#status-filter").selectOption(filter.status ?? "");
  await page.locator("#agent-filter").selectOption(filter.agent ?? "");
  await page.locator("#task-search").fill(filter.query ?? "");
}

const listed = async (page: Page) => Number(await page.locator("#table-count").getAttribute("data-listed"));
const drawnStatuses = (page: Page) => page.$$eval("#tasks tbody tr[data-key]", (rows: any[]) => rows.map((tr) => tr.dataset.status));

describe("the dashboard of a run of ten thousand tasks", () => {
  it("opens at once, draws only what is on screen, scrolls, folds the for_each copies, filters and searches", async () => {
    const served = await startCadre(["ui", join(dir, "runs")], { cwd: dir });
    const opening = Date.now();
    const page = await openPage(browser, `${served.origin}/?run=big#token=${served.token}`);
    await page.locator('#total-tasks[data-value="10000"]').waitFor();
    await page.locator('#tasks tbody tr[data-key="t:check-0"]').waitFor();
    const openedMs = Date.now() - opening;
    // On the page's clock, from the start of its navigation to the run drawn (no polling of the test's in it).
    const drawnMs = await page.evaluate(() => (globalThis as any).performance.getEntriesByName("cadre:drawn")[0].startTime as number);
    console.log(
      `cadre ui, a ${TASKS}-task record: drawn ${Math.round(drawnMs)} ms after the page's navigation began (${openedMs} ms as the test saw it)`,
    );
    await page.screenshot({ path: join(SHOTS, "ten-thousand.png") });

    // The copies fold into one row; the plain tasks follow it.
    const group = page.locator('#tasks tbody tr.group[data-group="review-{{item}}"]');
    expect(await group.locator("button").textContent()).toBe("▸ review-{{item}} (9,000 copies)");
    expect(await group.locator("td").textContent()).toContain("7,920 succeeded · 900 failed · 180 cancelled");
    expect((await tableKeys(page)).slice(0, 3)).toEqual(["t:check-0", "t:check-1", "t:check-2"]);
    expect(await drawnRows(page)).toBeLessThan(120);

    // Scrolled to the end: the last task is drawn, and still only a few screens of rows are.
    await scrollTable(page, "end");
    await page.locator('#tasks tbody tr[data-key="t:check-999"]').waitFor();
    expect(await drawnRows(page)).toBeLessThan(120);

    // Opened, the group lists its copies in order, all ten thousand rows in the scroll.
    await scrollTable(page, 0);
    await group.locator("button").click();
    expect(await group.locator("button").textContent()).toBe("▾ review-{{item}} (9,000 copies)");
    expect((await tableKeys(page)).slice(0, 2)).toEqual(["t:review-file-0", "t:review-file-1"]);
    await scrollTable(page, "end");
    await page.locator('#tasks tbody tr[data-key="t:check-999"]').waitFor();
    await scrollTable(page, 5_000 * 30);
    const middle = await tableKeys(page);
    expect(middle.length).toBeGreaterThan(10);
    expect(middle.length).toBeLessThan(120);
    expect(middle.every((key) => key.startsWith("t:review-file-"))).toBe(true);

    // By status: the failed ones alone (one in ten), each drawn as failed.
    await scrollTable(page, 0);
    await filterBy(page, { status: "failed" });
    expect(await listed(page)).toBe(1_000);
    expect(await page.locator("#table-count").textContent()).toBe("1,000 of 10,000 shown");
    const failed = await drawnStatuses(page);
    expect(failed.length).toBeGreaterThan(10);
    expect(new Set(failed)).toEqual(new Set(["failed"]));

    // By agent and status together: the plain tasks that failed are all checkers (odd i: every i % 10 == 7 is odd).
    await filterBy(page, { status: "failed", agent: "checker" });
    expect(await listed(page)).toBe(100);
    await filterBy(page, { agent: "fixer" });
    expect(await listed(page)).toBe(500);

    // By name: check-42 and check-420 … check-429.
    await filterBy(page, { query: "check-42" });
    expect(await listed(page)).toBe(11);
    expect((await tableKeys(page)).sort()).toEqual(["t:check-42", ...Array.from({ length: 10 }, (_, i) => `t:check-42${i}`)].sort());
    // A search inside the group shows its matching copies under it.
    await filterBy(page, { query: "review-file-8999" });
    expect(await tableKeys(page)).toEqual(["t:review-file-8999"]);
    expect(await group.locator("button").textContent()).toBe("▾ review-{{item}} (9,000 copies, 1 shown)");

    // Filters off: the whole run again.
    await filterBy(page, {});
    expect(await page.locator("#table-count").textContent()).toBe("");
    expect(await drawnRows(page)).toBeLessThan(120);
  }, 120_000);
});
