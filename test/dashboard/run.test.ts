// The dashboard of `cadre run --ui` and `cadre ui` in a real headless Chromium, against --rehearse runs.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { launchBrowser, openPage, REBOUND_HOST, recordStatuses, SHOTS, startCadre, tableKeys, tableStatuses } from "../support/dashboard.ts";
import { claudeDescendants, isGone } from "../support/processes.ts";

/**
 * Two slots for four tasks: gamma waits in the queue, delta waits for beta. Alpha reads a file
 * (its tool call and result show first) and answers three seconds later, so the page can be
 * seen streaming. Every task runs for a second at least: the page's updates come a few times a
 * second, so a shorter run could go from starting to succeeded between two of them.
 */
const CONFIG = `
name: dashboard-demo
concurrency: 2
defaults: { cwd: . }
tasks:
  - { name: alpha, prompt: Read notes.txt and report. }
  - { name: beta, prompt: Say hello. }
  - { name: gamma, prompt: Say hello. }
  - { name: delta, prompt: "Follow up on {{results.beta}}", depends_on: [beta] }
rehearsal:
  alpha:
    - { tool_use: { name: Read, input: { file_path: notes.txt } }, delay_ms: 1000 }
    - { text: "alpha read: {{tool_result}}", delay_ms: 3000 }
  beta:
    - { text: beta says hello, delay_ms: 2500 }
  gamma:
    - { text: gamma says hello, delay_ms: 1000 }
  delta:
    - { text: "delta follows up on: {{prompt}}", delay_ms: 1000 }
`;

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-dashboard-"));
  await writeFile(join(dir, "swarm.yaml"), CONFIG);
  await writeFile(join(dir, "notes.txt"), "the notes say: ship on Friday\n");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

const text = async (page: Page, selector: string) => (await page.locator(selector).textContent()) ?? "";
const value = async (page: Page, id: string) => Number(await page.locator(`#${id}`).getAttribute("data-value"));

async function expectTotalsOf(page: Page, outDir: string): Promise<void> {
  const summary = await readSummary(outDir);
  expect(await value(page, "total-tasks")).toBe(summary.totals.tasks);
  expect(await value(page, "total-turns")).toBe(summary.totals.num_turns);
  expect(await value(page, "total-cost")).toBeCloseTo(summary.totals.cost_usd, 10);
  // The rehearsal caches as the API does: the share of input read from the cache, as the final table gives it.
  const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens } = summary.totals.usage;
  const share = cache_read_input_tokens / (input_tokens + cache_creation_input_tokens + cache_read_input_tokens);
  expect(share).toBeGreaterThan(0);
  expect(await value(page, "total-cache")).toBeCloseTo(share, 10);
  expect(await text(page, "#total-cache")).toBe(`${Math.round(share * 100)}% of input`);
  // A rehearsal's costs are made up by the scripted model, and say so.
  expect(summary.cost_simulated).toBe(true);
  expect(await text(page, "#total-cost")).toMatch(/^~\$[\d.]+ \(simulated\)$/);
  expect(await text(page, "#total-statuses")).toContain(`succeeded ${summary.totals.succeeded}`);
  expect(await tableStatuses(page)).toEqual(Object.fromEntries(summary.tasks.map((task) => [`t:${task.name}`, task.status])));
}

describe("the dashboard of a run", () => {
  it("cadre run --ui: the table shows every task as it changes, a task's tool call and answer stream in, the totals end as summary.json's", async () => {
    const outDir = join(dir, "runs", "live");
    const served = await startCadre(["run", "swarm.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: dir });
    const page = await openPage(browser, served.url);
    const statuses = await recordStatuses(page);
    // The token left the address bar once the page had it.
    await page.waitForFunction(() => !(globalThis as any).location.hash.includes("token"));

    // Every task is there from the start, in the config's order; delta waits for beta.
    expect(await tableKeys(page)).toEqual(["t:alpha", "t:beta", "t:gamma", "t:delta"]);
    expect(await text(page, 'tr[data-key="t:delta"] td.activity')).toBe("after beta");

    // Alpha's conversation: the Read call with its input, then its result, and only later the answer.
    await page.locator('tr[data-key="t:alpha"] button').click({ timeout: 30_000 });
    const conversation = page.locator("#conversation");
    await conversation.locator(".entry.tool-call", { hasText: "Read" }).waitFor({ timeout: 30_000 });
    expect(await conversation.locator(".entry.tool-call pre").first().textContent()).toContain('"file_path": "notes.txt"');
    await conversation.locator(".entry.tool-call .result", { hasText: "ship on Friday" }).waitFor({ timeout: 30_000 });
    expect(await conversation.locator(".entry.text").count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, "run-in-progress.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(SHOTS, "run-in-progress-dark.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "light" });
    await conversation.locator(".entry.text", { hasText: "alpha read:" }).waitFor({ timeout: 30_000 });
    await conversation.locator(".entry.result", { hasText: "turn finished" }).waitFor({ timeout: 30_000 });

    // The run ends: the page says so and agrees with summary.json.
    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 60_000 });
    await expectTotalsOf(page, outDir);
    const seen = await statuses();
    for (const key of ["t:alpha", "t:beta", "t:gamma", "t:delta"]) {
      expect(seen[key]!.at(-1), key).toBe("succeeded");
      expect(seen[key], key).toContain("running");
    }
    // Two slots for three ready tasks: one of them was seen waiting in the queue; delta waited for beta.
    expect(Object.values(seen).some((history) => history.includes("queued"))).toBe(true);
    expect(seen["t:delta"]![0]).toBe("waiting");
    // The timeline has a lane per task.
    expect(await page.locator("#timeline .lane").count()).toBe(4);

    // The page stays until Ctrl-C; then cadre ends with the run's exit code and leaves no claude behind.
    const workers = await claudeDescendants(served.process.pid!);
    served.process.kill("SIGINT");
    const ended = await served.process;
    expect(ended.exitCode, served.output()).toBe(0);
    for (const pid of workers) expect(await isGone(pid)).toBe(true);
  }, 150_000);

  it("cadre ui: opens a past run with its conversations; refuses a foreign Host or Origin, and data without the token", async () => {
    const outDir = join(dir, "runs", "past");
    const run = await startCadre(["run", "swarm.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: dir });
    await expect.poll(run.output, { timeout: 90_000 }).toMatch(/the dashboard stays open/);
    run.process.kill("SIGTERM");
    expect((await run.process).exitCode).toBe(0);

    const served = await startCadre(["ui", join(dir, "runs")], { cwd: dir });
    const page = await openPage(browser, `${served.origin}/?run=past#token=${served.token}`);
    await page.locator("#run-state", { hasText: "recorded run" }).waitFor();
    // Both runs are listed; this one is shown.
    expect(await page.locator("#run-picker option").count()).toBe(2);
    expect(await page.locator("#run-picker").inputValue()).toBe("past");
    await expectTotalsOf(page, outDir);
    await page.locator('tr[data-key="t:alpha"] button').click();
    const conversation = page.locator("#conversation");
    await conversation.locator(".entry.tool-call .result", { hasText: "ship on Friday" }).waitFor();
    await conversation.locator(".entry.text", { hasText: "alpha read:" }).waitFor();
    await page.locator("#conversation-state", { hasText: "finished" }).waitFor();

    // DNS rebinding: a name that resolves here reaches the port, and is refused.
    const port = new URL(served.origin).port;
    const rebound = await browser.newPage();
    const response = await rebound.goto(`http://${REBOUND_HOST}:${port}/#token=${served.token}`);
    expect(response?.status()).toBe(403);
    expect(await rebound.locator("body").textContent()).toContain(`Host "${REBOUND_HOST}:${port}" is not allowed`);
    await rebound.close();
    // Another site's page: its requests carry their Origin, and get nothing.
    const api = `${served.origin}/api/runs?token=${served.token}`;
    expect(await status(api, { origin: "http://evil.example" })).toBe(403);
    expect(await status(api, { origin: `http://${REBOUND_HOST}:${port}` })).toBe(403);
    expect(await status(api, { origin: served.origin })).toBe(200);
    // The data needs the token; the page itself holds none.
    expect(await status(`${served.origin}/api/runs`, {})).toBe(401);
    expect(await status(`${served.origin}/api/runs?token=wrong-token-0123456789`, {})).toBe(401);
    expect(await status(`${served.origin}/`, {})).toBe(200);

    served.process.kill("SIGINT");
    expect((await served.process).exitCode).toBe(0);
  }, 150_000);
});

/** The status of a GET with these headers (fetch would not let a test set Origin). */
function status(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on("error", reject);
  });
}
