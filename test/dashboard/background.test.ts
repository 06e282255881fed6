// A task's background work on the dashboard (a real Chromium) and in the record: a workflow's agents listed under the task.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { THREE_AGENT_WORKFLOW } from "../support/background.ts";
import { cadre, readSummary } from "../support/cli.ts";
import { launchBrowser, openPage, SHOTS, startCadre } from "../support/dashboard.ts";

/** The workflow's agents answer after two seconds, so that the page sees them run. */
const CONFIG = `
name: background-demo
defaults: { cwd: ., allowed_tools: [Workflow] }
tasks:
  - { name: wf, prompt: Run the workflow. }
rehearsal:
  wf:
    - { tool_use: { name: Workflow, input: { script: ${JSON.stringify(THREE_AGENT_WORKFLOW)} } } }
    - { text: launched }
    - { text: the workflow reported back }
  "wf:subagent":
    - { text: agent reply, delay_ms: 2000 }
`;

let dir: string;
let browser: Browser;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-dashboard-bg-"));
  await writeFile(join(dir, "swarm.yaml"), CONFIG);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("a task's background work, seen while it runs and kept in the record", () => {
  it("cadre run --ui lists the workflow and its three agents under the task, and summary.json keeps them", async () => {
    const outDir = join(dir, "runs", "live");
    const served = await startCadre(["run", "swarm.yaml", "--rehearse", "--ui", "--out", outDir], { cwd: dir });
    const page = await openPage(browser, served.url);

    // While the workflow runs: the workflow under the task, its agents under it.
    const workflow = page.locator("tbody tr.background", { hasText: "workflow: three agents" });
    await workflow.waitFor({ timeout: 60_000 });
    for (const label of ["agent-1", "agent-2", "agent-3"]) await page.locator("tbody tr.background", { hasText: label }).waitFor({ timeout: 30_000 });
    const order = await page.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-key") ?? tr.textContent?.trim() ?? ""));
    const at = order.indexOf("t:wf");
    expect(order[at + 1]).toMatch(/workflow: three agents/);
    expect(order.slice(at + 2, at + 5).map((entry) => /agent-\d/.exec(entry)?.[0])).toEqual(["agent-1", "agent-2", "agent-3"]);
    expect(await page.locator('tr[data-key="t:wf"]').getAttribute("data-status")).toBe("running");
    await page.screenshot({ path: join(SHOTS, "background-running.png"), fullPage: true });

    // The task ends with the turn after the workflow reported back; its agents stay listed, done.
    await page.locator("#run-state", { hasText: "finished" }).waitFor({ timeout: 60_000 });
    expect(await page.locator('tr[data-key="t:wf"]').getAttribute("data-status")).toBe("succeeded");
    await page
      .locator("tbody tr.background", { hasText: /workflow: three agents/ })
      .locator("td.status", { hasText: "completed" })
      .waitFor();
    expect(await page.locator('tbody tr.background[data-depth="2"][data-status="done"]').count()).toBe(3);
    served.process.kill("SIGINT");
    expect((await served.process).exitCode, served.output()).toBe(0);

    const summary = await readSummary(outDir);
    const [task] = summary.tasks;
    expect(task).toMatchObject({ status: "succeeded", text: "the workflow reported back" });
    expect(task!.background_tasks).toEqual([
      expect.objectContaining({
        kind: "local_workflow",
        description: "three agents",
        status: "completed",
        workflow_name: "three",
        phases: ["Fan"],
        result: { replies: ["agent reply", "agent reply", "agent reply"] },
      }),
    ]);
    expect(task!.background_tasks![0]!.agents!.map((agent) => [agent.label, agent.state])).toEqual([
      ["agent-1", "done"],
      ["agent-2", "done"],
      ["agent-3", "done"],
    ]);
    expect(task!.background_tasks![0]!.usage!.total_tokens).toBeGreaterThan(0);

    // cadre ui reads the same from the record.
    const ui = await startCadre(["ui", join(dir, "runs")], { cwd: dir });
    const recordPage = await openPage(browser, `${ui.origin}/?run=live#token=${ui.token}`);
    await recordPage.locator("#run-state", { hasText: "recorded run" }).waitFor();
    await recordPage.locator("tbody tr.background", { hasText: "workflow: three agents" }).waitFor();
    expect(await recordPage.locator('tbody tr.background[data-depth="2"][data-status="done"]').count()).toBe(3);
  }, 180_000);

  it("cadre run --json streams the background task's events as children of the task", async () => {
    const run = await cadre(["run", join(dir, "swarm.yaml"), "--rehearse", "--json", "--out", join(dir, "runs", "json")]);
    expect(run.exitCode, run.stderr).toBe(0);
    const events = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; task?: { name: string }; background?: { status: string; agents?: unknown[] } });
    const background = events.filter((event) => event.type === "background_task");
    expect(background.length).toBeGreaterThan(0);
    expect(background.every((event) => event.task?.name === "wf")).toBe(true);
    expect(background.at(-1)!.background).toMatchObject({ status: "completed" });
    expect(background.at(-1)!.background!.agents).toHaveLength(3);
  }, 120_000);
});
