// The CLI's session controls from a swarm file and from an agent file reach the real CLI and the API: effort, thinking,
// the system prompt's dynamic sections, and an agent file's Claude Code keys (effort, mcpServers, hooks) that were once dropped.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { orchestratorOptionsFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";
import { collect } from "../support/streams.ts";
import { settledOf } from "../support/swarm.ts";

describe("session controls", () => {
  it("effort: low on an agent and effort: high in an agent file arrive as output_config.effort; the file's mcpServers and hooks work", async () => {
    const server = await createRehearsal({
      quick: [{ text: "quick" }],
      deep: [{ text: "deep" }],
      plain: [{ text: "plain" }],
      medium: [{ text: "medium" }],
    });
    const cwd = await tempHome("cadre-controls-");
    const hookRan = join(cwd, "hook-ran");
    const shout = join(process.cwd(), "test", "fixtures", "mcp", "shout-server.mjs");
    await writeFile(
      join(cwd, "deep.md"),
      [
        "---",
        "name: deep",
        "description: Thinks hard",
        "effort: high",
        "mcpServers:",
        `  - shout: { command: node, args: [${JSON.stringify(shout)}] }`,
        "hooks:",
        `  UserPromptSubmit: [{ hooks: [{ type: command, command: "touch ${hookRan}" }] }]`,
        "---",
        "You think hard.",
      ].join("\n"),
    );
    const parsed = await parseSwarmConfig(
      JSON.stringify({
        defaults: { cwd, effort: "max" },
        agents: {
          quick: { description: "Answers fast", prompt: "You answer fast.", effort: "low", exclude_dynamic_sections: true },
          deep: "deep.md",
        },
        tasks: [
          { name: "quick", agent: "quick", prompt: "hi" },
          { name: "deep", agent: "deep", prompt: "hi" },
          // The pinned CLI keeps adaptive thinking for its default model whatever it is told; an older model takes "disabled".
          { name: "plain", prompt: "hi", model: "claude-sonnet-4-5", thinking: "disabled" },
          { name: "medium", prompt: "hi", effort: "medium" },
        ],
      }),
      { baseDir: cwd, env: {}, format: "json" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const { orchestrator } = await rehearsedOrchestrator(server, orchestratorOptionsFor(parsed.config));
    const events = await collect(runSwarm({ config: parsed.config, orchestrator, signal: new AbortController().signal }));
    for (const e of settledOf(events)) expect(e.result.status, `${e.task.name}: ${JSON.stringify(e.result.error)}`).toBe("succeeded");

    const first = (script: string) => requestsOf(server.requests, script)[0]!;
    expect(first("quick").outputConfig).toMatchObject({ effort: "low" });
    expect(first("deep").outputConfig).toMatchObject({ effort: "high" });
    // A task's own setting wins over the defaults'.
    expect(first("medium").outputConfig).toMatchObject({ effort: "medium" });
    expect(first("quick").thinking).toMatchObject({ type: "adaptive" });
    expect(first("plain").thinking).toEqual({ type: "disabled" });
    // exclude_dynamic_sections: the per-session memory section (its path names the working directory) leaves the system
    // prompt for the first user message (on 2.1.332 the directory itself is in the first message either way).
    const memory = ".claude/projects/";
    expect(first("medium").system).toContain(memory);
    expect(first("quick").system).not.toContain(memory);
    expect(JSON.stringify(first("quick").messages)).toContain(memory);
    // The agent file's MCP server and hook, which cadre once dropped.
    expect(first("deep").tools).toContain("mcp__shout__shout");
    expect(existsSync(hookRan)).toBe(true);
  }, 180_000);
});
