// `cadre mcp --config swarm.yaml --rehearse`: the config's agents by name, its rehearsal scripts offline.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CADRE_BIN, call, startStdioCadre, textOf } from "../support/mcp.ts";
import { tempHome } from "../support/rehearsal.ts";

const CONFIG = `
name: review-swarm
agents:
  reviewer:
    description: Reviews code
    prompt: You review code and answer in one line.
    model: claude-reviewer-test
tasks:
  - name: reviewer
    agent: reviewer
    prompt: unused by cadre mcp
rehearsal:
  reviewer:
    - text: "reviewed: {{prompt}}"
`;

describe("cadre mcp --config", () => {
  it("offers the config's agents to spawn_session and runs a child as one", async () => {
    const dir = await tempHome("cadre-mcp-config-");
    const file = join(dir, "swarm.yaml");
    await writeFile(file, CONFIG);
    const { client } = await startStdioCadre(null, ["--config", file, "--rehearse"]);

    const spawn = (await client.listTools()).tools.find((t) => t.name === "spawn_session")!;
    expect((spawn.inputSchema.properties as Record<string, { enum?: string[] }>).agent?.enum).toEqual(["reviewer"]);

    const spawned = await call(client, "spawn_session", { prompt: "check main.ts", agent: "reviewer" });
    expect(spawned.structuredContent).toMatchObject({ agent: "reviewer", status: "idle", result: "reviewed: check main.ts" });
    // The agent's settings reached the child: its model shows in the session's init message.
    const transcript = await call(client, "get_transcript", { session_id: spawned.structuredContent!.session_id });
    expect(textOf(transcript)).toContain("model claude-reviewer-test");

    const unknown = await call(client, "spawn_session", { prompt: "x", agent: "writer" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("reviewer");
  });

  it("refuses an invalid config with its problems, before serving", async () => {
    const dir = await tempHome("cadre-mcp-config-");
    const file = join(dir, "bad.yaml");
    await writeFile(file, "tasks: []\nagnets: {}\n");
    const result = await execa(process.execPath, [CADRE_BIN, "mcp", "--config", file], { reject: false, stdin: "ignore" });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/agnets/);
  });
});
