// What a workflow script's agents are started with: no peer MCP server (they talk through the script) and, unless
// --session-files says otherwise, no session files of the CLI (cadre keeps each agent's transcript itself). cadre runs
// as a user runs it (node bin/cadre.js), its workers against this test's scripted model.
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { bin } from "../support/cli.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const SCRIPT = `export const meta = { name: "two", description: "two agents" }
return await parallel([() => agent("first", { label: "a" }), () => agent("second", { label: "b" })])
`;

/** The CLI's session files under a HOME: ~/.claude/projects/<project>/<session>.jsonl. */
async function sessionFiles(home: string): Promise<string[]> {
  const projects = join(home, ".claude", "projects");
  const entries = await readdir(projects, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((name) => name.endsWith(".jsonl"));
}

async function runTwo(server: RehearsalServer, ...extra: string[]) {
  const dir = await tempHome("cadre-wf-lean-");
  const home = join(dir, "home");
  const script = join(dir, "two.js");
  await writeFile(script, SCRIPT);
  const out = join(dir, "run");
  const run = await execa("node", [bin, "run", script, "--out", out, ...extra], {
    cwd: dir,
    env: offlineClaudeEnv({ baseUrl: server.url, home }),
    extendEnv: false,
    reject: false,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
  return { home, out, summary };
}

describe("a workflow script's agents", () => {
  it("get no peer server and keep no session files; each still has its transcript in the record", async () => {
    const server = await createRehearsal({ default: [{ text: "done: {{task}}" }] });
    const { home, out, summary } = await runTwo(server);
    expect(summary.result).toEqual(["done: first", "done: second"]);
    const played = server.requests.filter((request) => request.outcome === "played");
    expect(played).toHaveLength(2);
    // cadre's own agent files are always found, so before, every agent counted as one with peers to reach.
    for (const request of played) expect(request.tools.filter((tool) => tool.startsWith("mcp__cadre__"))).toEqual([]);
    expect(await sessionFiles(home)).toEqual([]);
    for (const row of summary.tasks) {
      // Relative to summary.json.
      const transcript = await readFile(join(out, row.transcript), "utf8");
      expect(transcript).toContain(row.session_id);
    }
  });

  it("keep the CLI's session files with --session-files, for `claude --resume <session_id>`", async () => {
    const server = await createRehearsal({ default: [{ text: "done: {{task}}" }] });
    const { home, summary } = await runTwo(server, "--session-files");
    const files = await sessionFiles(home);
    for (const row of summary.tasks) expect(files.some((file) => file.endsWith(`${row.session_id}.jsonl`))).toBe(true);
  });
});
