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

  /** The agents this repository ships, as a project elsewhere sees them: after its own, marked shipped. */
  const shipped = (name: string, shadowedBy?: string) =>
    `${join(repo, "agents", `${name}.md`)} (shipped with cadre${shadowedBy === undefined ? "" : `; shadowed by ${shadowedBy}`})`;
  const rows = (stdout: string) => stdout.split("\n").map((line) => line.split(/\s{2,}/));

  it("lists project, project .claude, user and shipped agents with their source, marking shadowed ones", async ({ tmp: root }) => {
    const cwd = join(root, "project");
    const home = join(root, "home");
    await agentFile(join(cwd, "agents"), "reviewer.md", "reviewer", "Project reviewer");
    await agentFile(join(cwd, ".claude", "agents"), "critic.md", "critic", "Project critic");
    await agentFile(join(home, ".claude", "agents"), "reviewer.md", "reviewer", "User reviewer");
    await agentFile(join(home, ".claude", "agents"), "helper.md", "helper", "x".repeat(200));
    await writeFile(join(home, ".claude", "agents", "broken.md"), "no front matter here");

    const result = await run(cwd, home);
    expect(result.exitCode).toBe(0);
    expect(rows(result.stdout).map((row) => (row[2]?.includes("shipped") ? [row[0], row[2]] : row))).toEqual([
      ["NAME", "DESCRIPTION", "SOURCE"],
      ["reviewer", "Project reviewer", "agents/reviewer.md"],
      ["critic", "Project critic", ".claude/agents/critic.md"],
      ["helper", `${"x".repeat(79)}…`, "~/.claude/agents/helper.md"],
      ["reviewer", "User reviewer", "~/.claude/agents/reviewer.md (shadowed by agents/reviewer.md)"],
      ["critic", shipped("critic", ".claude/agents/critic.md")],
      ["researcher", shipped("researcher")],
      ["reviewer", shipped("reviewer", "agents/reviewer.md")],
      ["summarizer", shipped("summarizer")],
      ["test-writer", shipped("test-writer")],
    ]);
    expect(result.stderr).toMatch(/^cadre agents: skipping ~\/\.claude\/agents\/broken\.md: no YAML front matter/);
  });

  it("lists only the shipped agents where the project and the home have none", async ({ tmp: root }) => {
    const result = await run(root, join(root, "home"));
    expect(result.exitCode).toBe(0);
    expect(rows(result.stdout).map((row) => [row[0], row[2]])).toEqual([
      ["NAME", "SOURCE"],
      ...["critic", "researcher", "reviewer", "summarizer", "test-writer"].map((name) => [name, shipped(name)]),
    ]);
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
