import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { it } from "../support/fixtures.ts";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const bin = join(repo, "bin", "cadre.js");

async function agentFile(dir: string, file: string, name: string, description: string) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, file), `---\nname: ${name}\ndescription: ${description}\ntools: Read\n---\nYou are ${name}.\n`);
}

describe("cadre agents", () => {
  const run = (cwd: string, home: string) => execa("node", [bin, "agents"], { cwd, reject: false, env: { HOME: home } });

  it("lists project, project .claude and user agents with their source, marking shadowed ones", async ({ tmp: root }) => {
    const cwd = join(root, "project");
    const home = join(root, "home");
    await agentFile(join(cwd, "agents"), "reviewer.md", "reviewer", "Project reviewer");
    await agentFile(join(cwd, ".claude", "agents"), "critic.md", "critic", "Project critic");
    await agentFile(join(home, ".claude", "agents"), "reviewer.md", "reviewer", "User reviewer");
    await agentFile(join(home, ".claude", "agents"), "helper.md", "helper", "x".repeat(200));
    await writeFile(join(home, ".claude", "agents", "broken.md"), "no front matter here");

    const result = await run(cwd, home);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split("\n").map((line) => line.split(/\s{2,}/))).toEqual([
      ["NAME", "DESCRIPTION", "SOURCE"],
      ["reviewer", "Project reviewer", "agents/reviewer.md"],
      ["critic", "Project critic", ".claude/agents/critic.md"],
      ["helper", `${"x".repeat(79)}…`, "~/.claude/agents/helper.md"],
      ["reviewer", "User reviewer", "~/.claude/agents/reviewer.md (shadowed by agents/reviewer.md)"],
    ]);
    expect(result.stderr).toMatch(/^cadre agents: skipping ~\/\.claude\/agents\/broken\.md: no YAML front matter/);
  });

  it("says where it looked when there are no agents", async ({ tmp: root }) => {
    const result = await run(root, join(root, "home"));
    expect([result.exitCode, result.stdout]).toEqual([0, "no agents found (searched agents, .claude/agents, ~/.claude/agents)"]);
  });

  it("lists the agents shipped in this repository", async ({ tmp: root }) => {
    const result = await run(repo, root);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    const names = result.stdout
      .split("\n")
      .slice(1)
      .map((line) => line.split(/\s+/)[0]);
    expect(names).toEqual(["critic", "researcher", "reviewer", "summarizer", "test-writer"]);
  });
});
