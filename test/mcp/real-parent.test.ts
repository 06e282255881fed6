// A real claude parent uses `cadre mcp` as its MCP server: its model spawns a child and asks it again.
import { describe, expect, it } from "vitest";
import { startClaude } from "../support/claude.ts";
import { CADRE_BIN, claudeDescendants, descendants, scriptedWorkspace } from "../support/mcp.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { until } from "../support/wait.ts";

describe("cadre mcp under a real parent claude", () => {
  it("the parent's model spawns a child, queries it again, and ends with both answers", async () => {
    const server = await createRehearsal({
      parent: [
        { tool_use: { name: "mcp__cadre__spawn_session", input: { prompt: "What is the capital of France?", name: "child" } } },
        { tool_use: { name: "mcp__cadre__query_session", input: { session_id: "child", prompt: "You said: {{tool_result}} -- and Italy?" } } },
        { text: "parent final: {{tool_result}}" },
      ],
    });
    const { scriptsFile } = await scriptedWorkspace({
      child: [{ text: "CHILD-ONE Paris" }, { text: "CHILD-TWO Rome; you reminded me: {{prompt}}" }],
    });
    const mcpConfig = { mcpServers: { cadre: { command: process.execPath, args: [CADRE_BIN, "mcp", "--scripts", scriptsFile] } } };
    const parent = await startClaude({
      baseUrl: server.baseUrlFor("parent"),
      args: [
        "--mcp-config",
        JSON.stringify(mcpConfig),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__cadre__spawn_session,mcp__cadre__query_session",
      ],
    });
    await parent.initialize();
    parent.sendUser("Ask a child about capitals.");
    const { result } = await parent.untilResult({ timeoutMs: 90_000 });

    expect(result.is_error).toBe(false);
    expect(result.result).toContain("parent final:");
    expect(result.result).toContain("CHILD-ONE Paris");
    expect(result.result).toContain("CHILD-TWO Rome");
    const played = requestsOf(server.requests, "parent");
    expect(played[0]!.tools).toEqual(expect.arrayContaining(["mcp__cadre__spawn_session", "mcp__cadre__query_session", "mcp__cadre__wait_sessions"]));
    expect(toolResults(played[1]).join("\n")).toContain("CHILD-ONE Paris");

    // The child lives under the cadre server under the parent; closing the parent ends them all.
    // The parent's own child: the reaper cadre starts is a node process too, one level down.
    const cadre = (await descendants(parent.pid)).find((p) => p.ppid === parent.pid && (p.comm === "node" || p.comm.startsWith("MainThread")));
    expect(cadre, "cadre mcp runs under the parent").toBeDefined();
    const children = await claudeDescendants(cadre!.pid);
    // The child, and the spare started when it took the first one (--warm 1).
    expect(children).toHaveLength(2);
    await parent.close();
    expect(await isGone(cadre!.pid, 15_000)).toBe(true);
    expect(await until(async () => ((await Promise.all(children.map((c) => isGone(c)))).every(Boolean) ? true : undefined), 10_000)).toBe(true);
  });
});
