// An in-process McpServer reached by the real CLI through mcp_message.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("worker in-process MCP servers", () => {
  it("the model calls mcp__<server>__<tool> and gets the tool's result", async () => {
    const calls: string[] = [];
    const server = new McpServer({ name: "weather", version: "1.0.0" });
    server.registerTool("forecast", { description: "Forecast for a city", inputSchema: { city: z.string() } }, async ({ city }) => {
      calls.push(city);
      return { content: [{ type: "text", text: `FORECAST(${city}): sunny, 23C` }] };
    });
    const rehearsal = await createRehearsal({
      s: [{ tool_use: { name: "mcp__weather__forecast", input: { city: "Lisbon" } } }, { text: "It says: {{tool_result}}" }],
    });
    const { worker } = await startRehearsedWorker(rehearsal, "s", {
      sdkMcpServers: { weather: server },
      // MCP tools are asked for; allow this one.
      canUseTool: (r) => (r.toolName === "mcp__weather__forecast" ? { behavior: "allow" } : { behavior: "deny", message: "no" }),
    });
    const result = await worker.run("weather in Lisbon?");
    expect(calls).toEqual(["Lisbon"]);
    const [first] = requestsOf(rehearsal.requests, "s");
    expect(first?.tools).toContain("mcp__weather__forecast");
    expect(toolResults(requestsOf(rehearsal.requests, "s").at(-1)).join("")).toContain("FORECAST(Lisbon): sunny, 23C");
    expect(result.text).toBe("It says: FORECAST(Lisbon): sunny, 23C");
    const servers = (worker.session as { mcp_servers?: { name: string; status: string }[] } | undefined)?.mcp_servers;
    expect(servers).toContainEqual(expect.objectContaining({ name: "weather", status: "connected" }));
  });
});
