// Requests a host sends the real CLI, each with its typed answer: permission mode, models, rules, settings, an MCP
// tool called outside a turn, the session's title, skills and plugins read again.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRehearsal } from "../support/rehearsal.ts";
import { startRehearsedWorker } from "../support/worker.ts";

const SHOUT = join(process.cwd(), "test", "fixtures", "mcp", "shout-server.mjs");

describe("host requests", () => {
  it("answer with their typed payloads", async () => {
    const server = await createRehearsal({ s: [{ text: "x" }] });
    const { worker } = await startRehearsedWorker(server, "s", {
      mcpServers: { shout: { command: "node", args: [SHOUT], env: { SHOUT_GREETING: "hey" } } },
      allowedTools: ["Bash(git diff:*)"],
    });
    expect(await worker.setPermissionMode("acceptEdits")).toMatchObject({ mode: "acceptEdits" });
    expect((await worker.listModels()).models.length).toBeGreaterThan(0);
    expect(JSON.stringify(await worker.permissionRules())).toContain("Bash(git diff:*)");
    await worker.applySettings({ env: { CADRE_PROBE: "1" } });
    expect(JSON.stringify(await worker.settings())).toContain("CADRE_PROBE");
    expect(JSON.stringify(await worker.mcpCall("mcp__shout__shout", { text: "direct" }))).toContain("DIRECT (from shout-server, greeting hey)");
    await worker.renameSession("probe session");
    expect(Array.isArray((await worker.reloadSkills()).skills)).toBe(true);
    expect(Array.isArray((await worker.reloadPlugins()).commands)).toBe(true);
  }, 60_000);
});
