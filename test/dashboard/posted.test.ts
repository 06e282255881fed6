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

/**
 * A run whose posters are far from what they posted: the lead above sixteen copies of a for_each, the last of which
 * posts too. fix-b fails (a 400 the CLI gives up on): filtered by status "failed", the table hides its poster.
 */
const FAR_POSTERS = {
  name: "far-posters",
  defaults: { cwd: ".", timeout_s: 300 },
  agents: { fixer: { description: "Fixes one module", prompt: "You fix modules." } },
  tasks: [
    { name: "lead", post_tasks: true, prompt: "Post a fix for a and b." },
    {
      name: "scan-{{item}}",
      post_tasks: true,
      for_each: Array.from({ length: 16 }, (_, i) => String(i + 1).padStart(2, "0")),
      prompt: "Scan {{item}}.",
    },
  ],
  rehearsal: {
    lead: [post("fix-a"), post("fix-b"), { text: "posted" }],
    "scan-16": [post("fix-scan"), { text: "posted" }],
    "scan-{{item}}": [{ text: "nothing found" }],
    "fix-b": [{ fail: { status: 400, message: "scripted outage" } }],
    fixer: [{ text: "fixed" }],
  },
};

function post(name: string) {
  return { tool_use: { name: "mcp__cadre__post_task", input: { name, agent: "fixer", prompt: `Do ${name}.` } } };
}

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-dashboard-posted-"));
  // The example as it is, but fix-cache answers only after ten seconds: the page sees the posted rows while the run is live.
  const example = parse(await readFile(join(repo, "examples", "posted-tasks.yaml"), "utf8"));
  example.rehearsal["fix-cache"][0].delay_ms = 10_000;
  await writeFile(join(dir, "slow-posted.yaml"), stringify(example));
  await writeFile(join(dir, "far-posters.yaml"), stringify(FAR_POSTERS));
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
  // The poster's detail lists what it posted, each with the status its row shows, and a link to that row.
  await expect.poll(async () => (await postsOf(page)).map((post) => post.name)).toEqual(Object.keys(POSTED));
  for (const post of await postsOf(page)) expect(post.status, post.name).toBe(post.inTable);
  await page.locator("#row-posts-list button", { hasText: "fix-retry" }).click();
  await expect.poll(() => selected(page)).toEqual(["fix-retry"]);
  expect(await page.locator("#row-posts").isHidden()).toBe(true);
}

/** The selected row's list of the tasks it posted: each link's name, the status beside it, and the status its row shows in the table. */
const postsOf = (page: Page) =>
  page.$$eval("#row-posts:not([hidden]) li", (items: any[]) =>
    items.map((item) => {
      const name: string = item.querySelector("button").textContent;
      const rows: any[] = [...(globalThis as any).document.querySelectorAll("#tasks tbody tr[data-key]")];
      const row = rows.find((tr) => tr.querySelector("button.row-name").textContent === name);
      return {
        name,
        status: item.querySelector(".posted-status").textContent as string,
        inTable: row?.querySelector("td.status").textContent ?? null,
      };
    }),
  );

/** Whether the row of `name` is drawn and wholly in the table's scrolled box, below its sticky head. */
const inView = (page: Page, name: string) =>
  page.evaluate((name) => {
    const document = (globalThis as any).document;
    const wrap = document.querySelector("#tasks-wrap").getBoundingClientRect();
    // The head's cells stick to the box's top; the head itself scrolls with the rows.
    const head = document.querySelector("#tasks thead").getBoundingClientRect().height;
    const rows: any[] = [...document.querySelectorAll("#tasks tbody tr[data-key]")];
    const row = rows.find((tr) => tr.querySelector("button.row-name").textContent === name)?.getBoundingClientRect();
    return row !== undefined && row.top >= wrap.top + head - 1 && row.bottom <= wrap.bottom + 1;
  }, name);

/** Only fix-b listed (status "failed", then a search): its links to the lead clear what hides the lead, say so, and reach it. */
async function expectFilteredPosterReached(page: Page): Promise<void> {
  const note = page.locator("#filter-note");
  await page.locator("#status-filter").selectOption("failed");
  await expect.poll(() => listed(page)).toEqual(["fix-b"]);
  await rowOf(page, "fix-b").getByRole("button", { name: "posted by lead: show its row" }).click();
  await expect.poll(() => selected(page)).toEqual(["lead"]);
  expect(await page.locator("#status-filter").inputValue()).toBe("");
  expect(await note.textContent()).toBe("status filter cleared to show lead");
  expect(await inView(page, "lead")).toBe(true);
  expect(await focusedRow(page)).toBe("lead");
  // Filtering again takes the note away; the detail's link clears both the search and the status filter.
  await page.locator("#task-search").fill("fix-b");
  expect(await note.textContent()).toBe("");
  await page.locator("#status-filter").selectOption("failed");
  await expect.poll(() => listed(page)).toEqual(["fix-b"]);
  await rowOf(page, "fix-b").locator("td.agent").click();
  await page.locator("#row-origin", { hasText: "Posted by lead" }).waitFor();
  await page.locator("#row-poster").click();
  await expect.poll(() => selected(page)).toEqual(["lead"]);
  expect(await page.locator("#task-search").inputValue()).toBe("");
  expect(await page.locator("#status-filter").inputValue()).toBe("");
  expect(await note.textContent()).toBe("status filter and search cleared to show lead");
  expect(await inView(page, "lead")).toBe(true);
}

/** The names of the rows the table lists now. */
const listed = (page: Page) => page.$$eval("#tasks tbody tr[data-key] button.row-name", (buttons: any[]) => buttons.map((b) => b.textContent));

/** The name of the row whose name button has the focus. */
const focusedRow = (page: Page) =>
  page.evaluate(() => (globalThis as any).document.activeElement?.closest("tr[data-key]")?.querySelector("button.row-name").textContent ?? null);

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

  it("a link reaches a poster off screen, in a folded for_each or filtered out, with the mouse and with the keyboard", async () => {
    const served = await startCadre(["run", "far-posters.yaml", "--rehearse", "--ui", "--out", join(dir, "runs", "far")], { cwd: dir });
    const page = await openPage(browser, served.url);
    await page.setViewportSize({ width: 1440, height: 600 });
    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 90_000 });
    // The copies are folded: the link of the task scan-16 posted opens their group and selects scan-16, in view.
    await rowOf(page, "fix-scan").waitFor();
    expect(await page.locator('tr.group button[aria-expanded="false"]').count()).toBe(1);
    expect(await rowOf(page, "scan-16").count()).toBe(0);
    await rowOf(page, "fix-scan").getByRole("button", { name: "posted by scan-16: show its row" }).click();
    await expect.poll(() => selected(page)).toEqual(["scan-16"]);
    expect(await page.locator('tr.group button[aria-expanded="true"]').count()).toBe(1);
    expect(await inView(page, "scan-16")).toBe(true);
    expect(await focusedRow(page)).toBe("scan-16");

    // At the end of the open list the lead is off screen; its link, with the keyboard, scrolls back to it.
    await page.locator("#tasks-wrap").evaluate((wrap: any) => (wrap.scrollTop = wrap.scrollHeight));
    await rowOf(page, "fix-a").waitFor();
    expect(await inView(page, "lead")).toBe(false);
    await rowOf(page, "fix-a").getByRole("button", { name: "posted by lead: show its row" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => selected(page)).toEqual(["lead"]);
    expect(await inView(page, "lead")).toBe(true);
    expect(await focusedRow(page)).toBe("lead");

    // The lead's detail lists its posts; Tab reaches their links, and Space selects fix-b, far below, in view.
    const posts = page.locator("#row-posts");
    await posts.getByRole("button", { name: "fix-b, failed: show its row" }).waitFor();
    expect((await postsOf(page)).map(({ name, status }) => [name, status])).toEqual([
      ["fix-a", "✔ succeeded"],
      ["fix-b", "✘ failed"],
    ]);
    await page.screenshot({ path: join(SHOTS, "posted-far.png") });
    await posts.getByRole("button", { name: "fix-a, succeeded: show its row" }).focus();
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    await expect.poll(() => selected(page)).toEqual(["fix-b"]);
    expect(await inView(page, "fix-b")).toBe(true);
    expect(await focusedRow(page)).toBe("fix-b");
    await expectFilteredPosterReached(page);
    served.process.kill("SIGINT");
    // fix-b failed: the run's exit code says so.
    expect((await served.process).exitCode, served.output()).toBe(1);
  }, 150_000);

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
