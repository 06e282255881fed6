// The dashboard of `cadre run --ui` in a real headless Chromium: a running task's message box and Stop, behind the token, in one process and on
// Redis hosts; Stop alone for a task that waits for a slot.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { readSummary } from "../support/cli.ts";
import { launchBrowser, openPage, SHOTS, startCadre } from "../support/dashboard.ts";
import { startHost, startRedis } from "../support/distributed.ts";
import { it } from "../support/fixtures.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { bothAgentsBusy, oneSlotSwarm, releaseSlot, releaseSteerMe, slotTaken, steeringSwarm } from "../support/steering.ts";
import { until } from "../support/wait.ts";

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

/** What the user types in the box: the agent gets it as it is, not trimmed. */
const TYPED = "  look at B instead\n";

/** Sends a message to steer-me from its row's box and stops stop-me from its row, as a user does, until the run has finished. */
async function steerFromThePage(page: Page, shot: string, tmp: string): Promise<void> {
  const box = page.locator("#steer");
  await page.locator('tr[data-key="t:steer-me"] button').click({ timeout: 30_000 });
  await box.waitFor({ state: "visible", timeout: 30_000 });
  // A box of whitespace alone is refused on the page; what is typed is sent as it is, spaces and newlines included.
  await page.locator("#steer-text").fill(" \n\t ");
  await page.locator("#steer-send").click();
  await page.locator("#steer-state", { hasText: "the message is empty (only whitespace): type what to send" }).waitFor({ timeout: 5_000 });
  await page.locator("#steer-text").fill(TYPED);
  await page.screenshot({ path: join(SHOTS, shot), fullPage: true });
  await page.locator("#steer-send").click();
  await page.locator("#steer-state", { hasText: "sent" }).waitFor({ timeout: 15_000 });
  await releaseSteerMe(tmp);

  await page.locator('tr[data-key="t:stop-me"] button').click();
  await page.locator("#steer-stop").click();
  await page.locator("#steer-state", { hasText: "stopped" }).waitFor({ timeout: 15_000 });
  await page.locator('tr[data-key="t:stop-me"]', { hasText: "cancelled" }).waitFor({ timeout: 20_000 });

  await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 60_000 });
  // The run has ended: no box.
  expect(await box.isHidden()).toBe(true);
}

/** What the run recorded of the steering: steer-me took the message, stop-me was stopped, both by the dashboard (on `host`, if named). */
async function steeredByThePage(outDir: string, host?: string): Promise<void> {
  const summary = await readSummary(outDir);
  const byName = new Map(summary.tasks.map((task) => [task.name, task]));
  const where = host === undefined ? {} : { host };
  expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to: look at B instead", ...where });
  expect(byName.get("stop-me")).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the dashboard" }, ...where });
  expect(summary.steering?.map((entry) => [entry.task, entry.action, entry.from, entry.text])).toEqual([
    ["steer-me", "send", "the dashboard", TYPED],
    ["stop-me", "stop", "the dashboard", undefined],
  ]);
}

describe("steering from the dashboard", () => {
  it("sends a message to one running task and stops another from its row; the API refuses both without the token", { timeout: 150_000 }, async ({
    tmp,
  }) => {
    await writeFile(join(tmp, "swarm.yaml"), steeringSwarm(tmp, { dependent: false }));
    const outDir = join(tmp, "out");
    const served = await startCadre(["run", "swarm.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: tmp });
    const page = await openPage(browser, served.url);
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);

    // Without the token the page's API reaches no task.
    const steerUrl = `${served.origin}/api/runs/out/steer`;
    const anonymous = await fetch(steerUrl, { method: "POST", body: JSON.stringify({ row: "t:stop-me", action: "stop" }) });
    expect(anonymous.status).toBe(401);

    await steerFromThePage(page, "steer-message.png", tmp);
    await steeredByThePage(outDir);
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(1);
  });

  it("reaches the tasks of a --redis run on the cadre worker host that runs them", { timeout: 180_000 }, async ({ tmp }) => {
    const redis = await startRedis();
    // Under --rehearse the host plays the config's scripts; this server only has to exist.
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    const host = await startHost(redis, model, { name: "page-host", script: "unused", concurrency: 3 });
    await writeFile(join(tmp, "swarm.yaml"), steeringSwarm(tmp, { dependent: false }));
    const outDir = join(tmp, "out");
    const served = await startCadre(["run", "swarm.yaml", "--redis", redis.url, "--rehearse", "--ui", "--out", outDir], { cwd: tmp });
    const page = await openPage(browser, served.url);
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);

    await steerFromThePage(page, "steer-message-redis.png", tmp);
    // Each applied by the host, which says who asked.
    await host.waitFor(/send for steer-me from the dashboard: done/);
    await host.waitFor(/stop for stop-me from the dashboard: done/);
    await steeredByThePage(outDir, "page-host");
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(1);
  });

  it("shows Stop alone for a task that waits for a slot, which ends it without starting it", { timeout: 150_000 }, async ({ tmp }) => {
    await writeFile(join(tmp, "swarm.yaml"), oneSlotSwarm(tmp, { dependent: false }));
    const outDir = join(tmp, "out");
    const served = await startCadre(["run", "swarm.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: tmp });
    const { waiting, working } = await until(() => slotTaken(tmp), 60_000, "a task in the slot");
    const page = await openPage(browser, served.url);

    await page.locator(`tr[data-key="t:${waiting}"] button`).click({ timeout: 30_000 });
    await page.locator("#steer").waitFor({ state: "visible", timeout: 30_000 });
    // No turn to message or interrupt yet: only Stop.
    expect(await page.locator("#steer-text").isHidden()).toBe(true);
    expect(await page.locator("#steer-interrupt").isHidden()).toBe(true);
    await page.screenshot({ path: join(SHOTS, "steer-queued.png"), fullPage: true });
    await page.locator("#steer-stop").click();
    await page.locator("#steer-state", { hasText: "stopped" }).waitFor({ timeout: 10_000 });
    await page.locator(`tr[data-key="t:${waiting}"]`, { hasText: "cancelled" }).waitFor({ timeout: 20_000 });
    // The task in the slot keeps its whole box.
    await page.locator(`tr[data-key="t:${working}"] button`).click();
    await page.locator("#steer-text").waitFor({ state: "visible", timeout: 10_000 });
    await releaseSlot(tmp);

    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 60_000 });
    const summary = await readSummary(outDir);
    const byName = new Map(summary.tasks.map((task) => [task.name, task]));
    expect(byName.get(working)).toMatchObject({ status: "succeeded", text: `${working} done` });
    expect(byName.get(waiting)).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by the dashboard" } });
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(1);
  });
});
