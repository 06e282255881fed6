// The page at / of `cadre mcp --http`: the child sessions of its clients, and their permission requests answered from the page.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, openPage, SHOTS, startCadre } from "../support/dashboard.ts";
import { call, scriptedWorkspace } from "../support/mcp.ts";

const TOKEN = "dashboard-test-token-0123456789";

const SCRIPTS = {
  builder: [
    { tool_use: { name: "Bash", input: { command: "touch built-by-child.txt", description: "make the file" } } },
    { text: "builder got: {{tool_result}}" },
  ],
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe("the dashboard of cadre mcp --http", () => {
  it("shows a child's pending permission request, answered from the page, and the child goes on", async () => {
    const { home, cwd, tmp, scriptsFile } = await scriptedWorkspace(SCRIPTS);
    const served = await startCadre(["mcp", "--http", "127.0.0.1:0", "--scripts", scriptsFile], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp, CADRE_MCP_TOKEN: TOKEN },
    });
    // A token the user gave is never printed: the address has a placeholder for it.
    expect(served.token).toBe("<your");
    expect(served.output()).not.toContain(TOKEN);

    const client = new Client({ name: "dashboard-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
    );
    const spawned = await call(client, "spawn_session", { prompt: "build it", name: "builder", wait_s: 30 });
    expect(spawned.structuredContent!.status).toBe("awaiting_permission");

    const page = await openPage(browser, `${served.origin}/#token=${TOKEN}`);
    const request = page.locator("#pending li", { hasText: "builder" });
    await request.waitFor();
    expect(await request.locator("pre").textContent()).toContain("touch built-by-child.txt");
    expect(await page.locator('#tasks tbody tr[data-status="awaiting_permission"]').count()).toBe(1);
    await page.locator("#tasks tbody tr button", { hasText: "builder" }).click();
    await page.locator("#conversation .entry.permission", { hasText: "use Bash" }).waitFor();
    await page.screenshot({ path: join(SHOTS, "mcp-permission.png"), fullPage: true });
    expect(existsSync(join(cwd, "built-by-child.txt"))).toBe(false);

    await request.getByRole("button", { name: "Allow" }).click();
    // The click only sends the answer; the request leaves the page once cadre has it (a snapshot
    // says so), and only then is the child past its permission wait.
    await page.locator("#pending-section").waitFor({ state: "hidden" });
    const waited = await call(client, "wait_sessions", { session_ids: ["builder"], timeout_s: 30 });
    const [info] = waited.structuredContent!.sessions as { status: string; result: string }[];
    expect(info).toMatchObject({ status: "idle" });
    expect(existsSync(join(cwd, "built-by-child.txt"))).toBe(true);
    // The page follows: the conversation shows the request answered and the turn's end.
    await page.locator("#conversation .entry.permission", { hasText: "answered" }).waitFor();
    await page.locator("#conversation .entry.text", { hasText: "builder got:" }).waitFor();
    await page.locator("#conversation .entry.result", { hasText: "turn finished" }).waitFor();
    await page.locator('#tasks tbody tr[data-status="idle"]').waitFor();

    // An answer to a request that no longer waits is refused with the reason.
    const stale = await page.evaluate(
      async ({ token }) => {
        const response = await fetch("/api/runs/sessions/answer", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ row: "id:nope", requestId: "r1", answer: { decision: "allow" } }),
        });
        return { status: response.status, body: await response.json() };
      },
      { token: TOKEN },
    );
    expect(stale).toMatchObject({ status: 409, body: { error: expect.stringContaining("no waiting permission request") } });

    await client.close();
    served.process.kill("SIGTERM");
    expect((await served.process).exitCode).toBe(0);
  }, 120_000);
});
