// cadre as a Claude Code plugin, checked on the pinned CLI offline: its manifests validate, it installs from this
// repository as a marketplace, and a real parent uses the installed plugin's MCP server to spawn a child.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startClaude } from "../support/claude.ts";
import { claudeDescendants, descendants, scriptedWorkspace } from "../support/mcp.ts";
import { claudeIn, homeWithPlugin, PLUGIN, REPO, readJson } from "../support/plugin.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";

const SPAWN = "mcp__plugin_cadre_cadre__spawn_session";

describe("the cadre plugin", () => {
  it.each([
    ["the marketplace", REPO],
    ["the plugin", PLUGIN],
  ])("%s passes claude plugin validate --strict with no warning", async (_, path) => {
    const home = await tempHome("cadre-plugin-");
    const result = await claudeIn(home, ["plugin", "validate", "--strict", path]);
    expect(result.all).toContain("Validation passed");
    expect(result.all).not.toMatch(/warning/i);
    expect(result.exitCode).toBe(0);
  });

  it("has one version: plugin.json, the marketplace entry, package.json and deno.json", async () => {
    const [plugin, marketplace, npm, jsr] = await Promise.all(
      [
        join(PLUGIN, ".claude-plugin/plugin.json"),
        join(REPO, ".claude-plugin/marketplace.json"),
        join(REPO, "package.json"),
        join(REPO, "deno.json"),
      ].map(readJson),
    );
    const entry = marketplace.plugins.find((p: { name: string }) => p.name === "cadre");
    expect([plugin.version, entry.version, jsr.version]).toEqual([npm.version, npm.version, npm.version]);
  });

  it("ships the same ready agents as agents/", async () => {
    const names = (await readdir(join(REPO, "agents"))).sort();
    expect((await readdir(join(PLUGIN, "agents"))).sort()).toEqual(names);
    for (const name of names) {
      expect(await readFile(join(PLUGIN, "agents", name), "utf8"), `plugin/agents/${name} differs from agents/${name}`).toBe(
        await readFile(join(REPO, "agents", name), "utf8"),
      );
    }
  });

  it("installs in a fresh HOME; details lists its commands, agents and skill; its MCP server connects", async () => {
    const { home, install } = await homeWithPlugin();
    expect(install).toContain("Successfully installed plugin: cadre@cadre");

    const details = await claudeIn(home, ["plugin", "details", "cadre@cadre"]);
    expect(details.exitCode).toBe(0);
    expect(details.all).toMatch(/Skills \(5\)\s+.*\bcadre\b/);
    for (const command of ["new", "run", "status", "workflow"]) expect(details.all).toMatch(new RegExp(`Skills \\(5\\).*\\b${command}\\b`));
    expect(details.all).toMatch(/Agents \(5\)\s+.*reviewer/);
    expect(details.all).toMatch(/MCP servers \(1\)\s+cadre/);

    const list = await claudeIn(home, ["mcp", "list"]);
    expect(list.all).toMatch(/plugin:cadre:cadre: node \S+\/bin\/cadre\.mjs mcp - ✔ Connected/);
  });

  it("a real claude -p parent calls the plugin's spawn_session and receives the child's answer", async () => {
    const { home } = await homeWithPlugin();
    const server = await createRehearsal({
      parent: [
        { tool_use: { name: SPAWN, input: { prompt: "What is the capital of France?", name: "child" } } },
        { text: "parent final: {{tool_result}}" },
      ],
    });
    const { scriptsFile } = await scriptedWorkspace({ child: [{ text: "CHILD-ANSWER Paris" }] });
    const parent = await startClaude({
      baseUrl: server.baseUrlFor("parent"),
      args: ["--allowedTools", SPAWN],
      // The plugin's server is the built cadre of this repository, with children on the scripted model.
      env: { HOME: home, USERPROFILE: home, CADRE_PLUGIN_ARGS: `--scripts ${scriptsFile}` },
    });
    await parent.initialize();
    parent.sendUser("Ask a child about capitals.");
    const { result } = await parent.untilResult({ timeoutMs: 90_000 });

    expect(result.is_error).toBe(false);
    expect(result.result).toContain("parent final:");
    expect(result.result).toContain("CHILD-ANSWER Paris");
    const played = requestsOf(server.requests, "parent");
    // The plugin's tools are offered once its server has connected: on a busy machine the CLI may send its first request
    // before that (it offers WaitForMcpServers meanwhile), so the request that carries the child's answer is the one to read.
    expect(played[1]!.tools).toEqual(expect.arrayContaining([SPAWN, "mcp__plugin_cadre_cadre__wait_sessions"]));
    expect(toolResults(played[1]).join("\n")).toContain("CHILD-ANSWER Paris");

    // The launcher, cadre under it and cadre's claude children all end with the parent.
    const below = await descendants(parent.pid);
    expect(await claudeDescendants(parent.pid)).not.toHaveLength(0);
    await parent.close();
    for (const process of below) expect(await isGone(process.pid, 15_000), `${process.comm} (pid ${process.pid}) outlived the parent`).toBe(true);
  });

  it("puts the plugin's cadre.mjs, the cadre of its version, on the PATH of Claude's Bash for its commands", async () => {
    const { home } = await homeWithPlugin();
    const server = await createRehearsal({
      parent: [{ tool_use: { name: "Bash", input: { command: "cadre.mjs --version" } } }, { text: "said: {{tool_result}}" }],
    });
    const parent = await startClaude({
      baseUrl: server.baseUrlFor("parent"),
      args: ["--allowedTools", "Bash(cadre.mjs:*)"],
      env: { HOME: home, USERPROFILE: home },
    });
    await parent.initialize();
    parent.sendUser("Which cadre is this?");
    const { result } = await parent.untilResult({ timeoutMs: 60_000 });
    expect(result.result).toBe(`said: cadre ${(await readJson(join(REPO, "package.json"))).version}`);
  });
});
