// A real claude parent hands a saved workflow to `cadre mcp` through run_workflow and gets its result: the
// script runs in cadre's sandbox, its agents are cadre's children on the scripted model.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startClaude } from "../support/claude.ts";
import { CADRE_BIN, scriptedWorkspace } from "../support/mcp.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";

const SAVED = `export const meta = { name: "capitals", description: "ask for two capitals at once" }
log("asking about " + args.countries.join(" and "))
const answers = await parallel(args.countries.map((country) => () => agent("capital of " + country + "?", { label: country })))
return { answers }
`;

describe("run_workflow under a real parent claude", () => {
  it("the parent's model runs a saved workflow and reads its result", { timeout: 180_000 }, async () => {
    const server = await createRehearsal({
      parent: [
        { tool_use: { name: "mcp__cadre__run_workflow", input: { name: "capitals", args: { countries: ["France", "Italy"] }, wait_s: 50 } } },
        { text: "parent final: {{tool_result}}" },
      ],
    });
    const { cwd, scriptsFile } = await scriptedWorkspace({
      "capitals/France": [{ text: "PARIS" }],
      "capitals/Italy": [{ text: "ROME" }],
    });
    await mkdir(join(cwd, ".claude", "workflows"), { recursive: true });
    await writeFile(join(cwd, ".claude", "workflows", "capitals.js"), SAVED);
    const mcpConfig = { mcpServers: { cadre: { command: process.execPath, args: [CADRE_BIN, "mcp", "--scripts", scriptsFile, "--warm", "0"] } } };
    const parent = await startClaude({
      baseUrl: server.baseUrlFor("parent"),
      cwd,
      args: ["--mcp-config", JSON.stringify(mcpConfig), "--strict-mcp-config", "--allowedTools", "mcp__cadre__run_workflow"],
    });
    await parent.initialize();
    parent.sendUser("Run the capitals workflow.");
    const { result } = await parent.untilResult({ timeoutMs: 150_000 });

    expect(result.is_error).toBe(false);
    const played = requestsOf(server.requests, "parent");
    expect(played[0]!.tools).toEqual(expect.arrayContaining(["mcp__cadre__run_workflow", "mcp__cadre__get_workflow"]));
    // The CLI hands its model the tool's structured content.
    const answer = JSON.parse(toolResults(played[1]).join("\n"));
    expect(answer).toMatchObject({
      name: "capitals",
      status: "succeeded",
      agents_started: 2,
      logs: ["asking about France and Italy"],
      result: { answers: ["PARIS", "ROME"] },
    });
    expect(result.result).toContain('"answers":["PARIS","ROME"]');
  });
});
