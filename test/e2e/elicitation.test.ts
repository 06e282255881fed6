// An MCP server that asks the user (elicitation) gets a real answer on the real CLI: from a handler (library), a policy
// (swarm file) or the parent's user (cadre mcp, through MCP elicitation); never the error reply it once got.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { ElicitationRequest } from "../../src/protocol/index.ts";
import { orchestratorOptionsFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm } from "../../src/swarm/runner.ts";
import { call, startStdioCadre } from "../support/mcp.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { collect } from "../support/streams.ts";
import { settledOf } from "../support/swarm.ts";
import { startRehearsedWorker } from "../support/worker.ts";

const ASK_SERVER = join(process.cwd(), "test", "fixtures", "mcp", "ask-server.mjs");
const ASKS = [{ tool_use: { name: "mcp__ask__ask", input: { why: "for the test" } } }, { text: "the server said: {{tool_result}}" }];

describe("elicitation", () => {
  it("reaches the library's handler, whose answer reaches the MCP server", async () => {
    const server = await createRehearsal({ s: ASKS });
    const asked: ElicitationRequest[] = [];
    const { worker } = await startRehearsedWorker(server, "s", {
      mcpServers: { ask: { command: "node", args: [ASK_SERVER] } },
      allowedTools: ["mcp__ask__ask"],
      onElicitation: async (request) => {
        asked.push(request);
        return { action: "accept", content: { name: "Ada" } };
      },
    });
    const result = await worker.run("ask me");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mcp_server_name: "ask", message: "What name should I use? (for the test)", mode: "form" });
    expect(asked[0]?.sessionId).toBe(worker.sessionId);
    expect(result.text).toBe('the server said: elicitation accept: {"name":"Ada"}');
  }, 60_000);

  it("follows the swarm file's policy, and declines by default", async () => {
    const server = await createRehearsal({ accepting: ASKS, declining: ASKS });
    const dir = await tempHome("cadre-elicit-");
    const parsed = await parseSwarmConfig(
      JSON.stringify({
        defaults: { cwd: dir, mcp_servers: { ask: { command: "node", args: [ASK_SERVER] } }, allowed_tools: ["mcp__ask__ask"] },
        tasks: [
          { name: "accepting", prompt: "ask", elicitation: { accept: { name: "Bo" } } },
          { name: "declining", prompt: "ask" },
        ],
      }),
      { baseDir: dir, env: {}, format: "json" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const { orchestrator } = await rehearsedOrchestrator(server, orchestratorOptionsFor(parsed.config));
    const settled = settledOf(await collect(runSwarm({ config: parsed.config, orchestrator, signal: new AbortController().signal })));
    const text = (name: string) => settled.find((e) => e.task.name === name)?.result.text;
    expect(text("accepting")).toBe('the server said: elicitation accept: {"name":"Bo"}');
    expect(text("declining")).toBe("the server said: elicitation decline: null");
  }, 120_000);

  it("reaches the parent's user through MCP elicitation (cadre mcp)", async () => {
    const dir = await tempHome("cadre-elicit-mcp-");
    const file = join(dir, "swarm.yaml");
    await writeFile(
      file,
      JSON.stringify({
        defaults: { mcp_servers: { ask: { command: "node", args: [ASK_SERVER] } }, allowed_tools: ["mcp__ask__ask"] },
        tasks: [{ name: "unused", prompt: "x" }],
      }),
    );
    const { client } = await startStdioCadre({ asker: ASKS }, ["--config", file, "--warm", "0"], { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Cy" } };
    });
    const spawned = await call(client, "spawn_session", { prompt: "ask", name: "asker", wait_s: 50 });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("MCP server ask asks: What name should I use? (for the test)");
    expect(spawned.structuredContent).toMatchObject({ status: "idle", result: 'the server said: elicitation accept: {"name":"Cy"}' });
  }, 120_000);
});
