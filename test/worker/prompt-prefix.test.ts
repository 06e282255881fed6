// Which worker options change the prefix the real CLI sends (tools + system prompt), pinned against promptPrefixKey.

import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { promptPrefixKey, Worker, type WorkerOptions } from "../../src/worker/index.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

interface Variant {
  name: string;
  /** Over the baseline's options. */
  options: (base: WorkerOptions, dirs: { other: string; otherHome: string; server: RehearsalServer }) => WorkerOptions;
  /** Measured on the pinned CLI: does the prefix differ from the baseline's? */
  prefixDiffers: boolean;
  /** Does promptPrefixKey tell it apart? True where the prefix differs, and where the key is cautious. */
  keyDiffers: boolean;
}

const envWith = (base: WorkerOptions, extra: Record<string, string>) => ({ ...base, env: { ...base.env, ...extra } });
function toolServer(): McpServer {
  const server = new McpServer({ name: "extra", version: "1.0.0" });
  server.registerTool("lookup", { description: "Looks a word up." }, async () => ({ content: [] }));
  return server;
}

const VARIANTS: Variant[] = [
  { name: "another prompt", options: (b) => b, prefixDiffers: false, keyDiffers: false },
  {
    name: "another ANTHROPIC_BASE_URL (script)",
    options: (b, { server }) => envWith(b, { ANTHROPIC_BASE_URL: server.baseUrlFor("other") }),
    prefixDiffers: false,
    keyDiffers: false,
  },
  { name: "allowedTools", options: (b) => ({ ...b, allowedTools: ["Read", "Bash(ls:*)"] }), prefixDiffers: false, keyDiffers: false },
  { name: "maxTurns", options: (b) => ({ ...b, maxTurns: 3 }), prefixDiffers: false, keyDiffers: false },
  { name: "includePartialMessages", options: (b) => ({ ...b, includePartialMessages: true }), prefixDiffers: false, keyDiffers: false },
  {
    name: "agents",
    options: (b) => ({ ...b, agents: { critic: { description: "Finds holes", prompt: "You find holes." } } }),
    prefixDiffers: false,
    keyDiffers: false,
  },
  {
    name: "hooks",
    options: (b) => ({ ...b, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => ({})] }] } }),
    prefixDiffers: false,
    keyDiffers: false,
  },
  { name: "maxThinkingTokens", options: (b) => ({ ...b, maxThinkingTokens: 4_000 }), prefixDiffers: false, keyDiffers: false },
  { name: "persistSession false", options: (b) => ({ ...b, persistSession: false }), prefixDiffers: false, keyDiffers: false },
  { name: "sessionId", options: (b) => ({ ...b, sessionId: randomUUID() }), prefixDiffers: false, keyDiffers: false },
  // Cautious: betas are headers, but a beta may bring tools.
  { name: "betas", options: (b) => ({ ...b, betas: ["context-1m-2025-08-07"] }), prefixDiffers: false, keyDiffers: true },
  { name: "additionalDirectories", options: (b, { other }) => ({ ...b, additionalDirectories: [other] }), prefixDiffers: false, keyDiffers: false },
  // Cautious: acceptEdits keeps the prefix, but plan mode changes the tools.
  { name: "permissionMode acceptEdits", options: (b) => ({ ...b, permissionMode: "acceptEdits" }), prefixDiffers: false, keyDiffers: true },
  { name: "permissionMode plan", options: (b) => ({ ...b, permissionMode: "plan" }), prefixDiffers: true, keyDiffers: true },
  { name: "model", options: (b) => ({ ...b, model: "claude-sonnet-4-5" }), prefixDiffers: true, keyDiffers: true },
  { name: "cwd", options: (b, { other }) => ({ ...b, cwd: other }), prefixDiffers: true, keyDiffers: true },
  {
    name: "HOME",
    options: (b, { otherHome, server }) => ({ ...b, env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("p"), home: otherHome }) }),
    prefixDiffers: true,
    keyDiffers: true,
  },
  {
    name: "appendSystemPrompt (an agent's prompt)",
    options: (b) => ({ ...b, appendSystemPrompt: "You review code." }),
    prefixDiffers: true,
    keyDiffers: true,
  },
  { name: "systemPrompt", options: (b) => ({ ...b, systemPrompt: "You review code." }), prefixDiffers: true, keyDiffers: true },
  { name: "tools", options: (b) => ({ ...b, tools: ["Read", "Grep"] }), prefixDiffers: true, keyDiffers: true },
  { name: "disallowedTools", options: (b) => ({ ...b, disallowedTools: ["Bash"] }), prefixDiffers: true, keyDiffers: true },
  {
    name: "jsonSchema",
    // Its own script answers with the StructuredOutput tool the schema brings.
    options: (b, { server }) => ({
      ...envWith(b, { ANTHROPIC_BASE_URL: server.baseUrlFor("structured") }),
      jsonSchema: { type: "object", properties: { verdict: { type: "string" } } },
    }),
    prefixDiffers: true,
    keyDiffers: true,
  },
  { name: "sdkMcpServers", options: (b) => ({ ...b, sdkMcpServers: { extra: toolServer() } }), prefixDiffers: true, keyDiffers: true },
  { name: "ENABLE_TOOL_SEARCH", options: (b) => envWith(b, { ENABLE_TOOL_SEARCH: "true" }), prefixDiffers: true, keyDiffers: true },
];

/** Runs one turn and returns what its first model request read from the simulated cache. */
async function firstRead(server: RehearsalServer, options: WorkerOptions, prompt: string): Promise<number> {
  const worker = await Worker.start(options);
  onTestFinished(async () => void (await worker.close()));
  const turn = await worker.run(prompt);
  await worker.close();
  const request = server.requests.find((r) => r.sessionId === turn.sessionId && r.step === 0);
  expect(request?.usage, `no request of session ${turn.sessionId}`).toBeDefined();
  return request!.usage!.cache_read_input_tokens;
}

describe("the prompt prefix", () => {
  it("changes with model, cwd, HOME, system prompt, tools, MCP servers; not with the prompt, allowed tools, agents or hooks", async () => {
    const server = await createRehearsal({
      p: [{ text: "ok" }],
      other: [{ text: "ok" }],
      structured: [{ tool_use: { name: "StructuredOutput", input: { verdict: "ok" } } }, { text: "done" }],
    });
    const home = await tempHome();
    const otherHome = await tempHome();
    const cwd = join(home, "work");
    const other = join(home, "other");
    await Promise.all([mkdir(cwd), mkdir(other)]);
    const base: WorkerOptions = { cwd, inheritEnv: false, env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("p"), home }) };

    // The baseline writes its prefix; a second worker like it reads all of it (tools and system prompt).
    expect(await firstRead(server, base, "hello")).toBe(0);
    const whole = await firstRead(server, base, "hello again");
    expect(whole).toBeGreaterThan(10_000);

    const observed: string[] = [];
    const expected: string[] = [];
    // A few at a time: the machine is small.
    for (let i = 0; i < VARIANTS.length; i += 4) {
      await Promise.all(
        VARIANTS.slice(i, i + 4).map(async (variant) => {
          const options = variant.options(base, { other, otherHome, server });
          // Each its own prompt: the conversation after the prefix is never cached already.
          const read = await firstRead(server, options, `prompt of ${variant.name}`);
          const keyDiffers = promptPrefixKey(options) !== promptPrefixKey(base);
          observed.push(`${variant.name}: prefix ${read === whole ? "same" : "differs"}, key ${keyDiffers ? "differs" : "same"}`);
          expected.push(`${variant.name}: prefix ${variant.prefixDiffers ? "differs" : "same"}, key ${variant.keyDiffers ? "differs" : "same"}`);
        }),
      );
    }
    expect(observed.sort()).toEqual(expected.sort());
  }, 180_000);
});
