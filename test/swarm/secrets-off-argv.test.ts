// MCP servers' env and headers never reach a command line: during a run on the real CLI no process on the machine has the
// token in /proc/PID/cmdline, while the stdio server gets it in its env and the HTTP server in its headers.
import { readdir, readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm, type SwarmEvent } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { settledOf } from "../support/swarm.ts";

const TOKEN = `tok-${process.pid}-${Date.now()}-never-on-argv`;

/** Every process whose command line holds `needle`, as "pid: command line". */
async function commandLinesWith(needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(needle)) hits.push(`${entry}: ${cmdline.replaceAll("\0", " ")}`);
  }
  return hits;
}

/** An MCP server over Streamable HTTP on loopback that records each request's headers; its tool says it was reached. */
async function httpMcpServer(): Promise<{ url: string; headers: IncomingHttpHeaders[] }> {
  const headers: IncomingHttpHeaders[] = [];
  const http = createServer(async (req, res) => {
    headers.push(req.headers);
    const server = new McpServer({ name: "vault", version: "1.0.0" });
    server.registerTool("ping", { description: "Answers pong.", inputSchema: { text: z.string() } }, async () => ({
      content: [{ type: "text", text: "pong from vault" }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => http.close(() => resolve())));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, headers };
}

describe("secrets stay off command lines", () => {
  it("an MCP server's env and headers reach the servers through initialize, and no command line on the machine holds them", async () => {
    const vault = await httpMcpServer();
    const server = await createRehearsal({
      caller: [
        { tool_use: { name: "mcp__shout__shout", input: { text: "hi" } } },
        { tool_use: { name: "mcp__vault__ping", input: { text: "hi" } } },
        { text: "done" },
      ],
    });
    const { orchestrator, cwd } = await rehearsedOrchestrator(server, {
      script: () => "caller",
    });
    const shout = join(process.cwd(), "test", "fixtures", "mcp", "shout-server.mjs");
    const parsed = await parseSwarmConfig(
      JSON.stringify({
        defaults: { cwd },
        tasks: [
          {
            name: "caller",
            prompt: "call the tools",
            mcp_servers: {
              shout: { command: "node", args: [shout], env: { SHOUT_GREETING: TOKEN } },
              vault: { type: "http", url: vault.url, headers: { Authorization: `Bearer ${TOKEN}` } },
            },
            permissions: { allow: ["mcp__shout__shout", "mcp__vault__ping"] },
          },
        ],
      }),
      { baseDir: cwd, env: {}, format: "json" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    // Scan the whole machine while the run goes on: from the task's start to its end, once per event and on a timer.
    const seen: string[] = [];
    let scans = 0;
    const scan = async () => {
      scans++;
      seen.push(...(await commandLinesWith(TOKEN)));
    };
    const timer = setInterval(() => void scan(), 100);
    const events: SwarmEvent[] = [];
    try {
      for await (const event of runSwarm({ config: parsed.config, orchestrator, signal: new AbortController().signal })) {
        events.push(event);
        await scan();
      }
    } finally {
      clearInterval(timer);
    }
    const result = settledOf(events)[0]?.result;
    expect(result?.status, JSON.stringify(result?.error)).toBe("succeeded");
    expect(scans).toBeGreaterThan(3);
    expect(seen).toEqual([]);
    // The stdio server had the token in its env; the HTTP server got it in a header.
    const results = toolResults(requestsOf(server.requests, "caller").at(-1));
    expect(results).toContain(`HI (from shout-server, greeting ${TOKEN})`);
    expect(results).toContain("pong from vault");
    expect(vault.headers.some((h) => h.authorization === `Bearer ${TOKEN}`)).toBe(true);
  }, 120_000);
});
