// agent(prompt, { isolation: 'worktree' }) under `cadre run script.js --rehearse`: real claude workers edit the same file,
// each in its own git worktree; their work is on their own branches, named in their rows, and the checkout stays as it was.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { bin } from "../support/cli.ts";
import { startHost, startRedis } from "../support/distributed.ts";
import { it } from "../support/fixtures.ts";
import { createRehearsal } from "../support/rehearsal.ts";

const SCRIPT = `export const meta = { name: "edit", description: "agents edit notes.txt, each in its own worktree" }
const [alpha, beta] = await parallel([
  () => agent("add a line saying alpha", { label: "alpha", isolation: "worktree", agentType: "editor" }),
  () => agent("add a line saying beta", { label: "beta", isolation: "worktree", agentType: "editor" }),
])
const reader = await agent("read notes.txt", { label: "reader", isolation: "worktree" })
return { alpha, beta, reader }
`;

const REHEARSAL = `alpha:
  - tool_use: { name: Edit, input: { file_path: notes.txt, old_string: "line one\\n", new_string: "line one\\nalpha\\n" } }
  - text: "alpha: {{tool_result}}"
beta:
  - tool_use: { name: Edit, input: { file_path: notes.txt, old_string: "line one\\n", new_string: "line one\\nbeta\\n" } }
  - text: "beta: {{tool_result}}"
reader:
  - tool_use: { name: Read, input: { file_path: notes.txt } }
  - text: "read: {{tool_result}}"
`;

const EDITOR = `---
name: editor
description: Edits files in place
permissionMode: acceptEdits
---
You edit the file you are told to, in place, and keep the change small.
`;

interface Row {
  name: string;
  status: string;
  branch?: string | null;
  commit?: string | null;
  base?: string;
  diff_stat?: string;
  result: unknown;
  error?: { code: string } | null;
  host?: string | null;
}

/** git in `cwd`, with an identity on the command line (the test machine may have none). */
async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd })).stdout.trim();
}

function run(cwd: string, out: string, ...extra: string[]) {
  return execa("node", [bin, "run", "edit.js", "--rehearse", "--out", out, ...extra], { cwd, reject: false });
}

/** A git repository in `dir` holding the script, its scripted replies and the editor agent; resolves with its first commit. */
async function repository(dir: string): Promise<string> {
  await mkdir(dir);
  await write(dir);
  await git(dir, "init", "--quiet", "--initial-branch=main");
  await git(dir, "add", ".");
  await git(dir, "commit", "--quiet", "-m", "start");
  return git(dir, "rev-parse", "HEAD");
}

/** The run's work is on its branches, each row names its branch, and the checkout is as it was; the branches are then deleted. */
async function expectWorkOnBranches(repo: string, start: string, out: string): Promise<Map<string, Row>> {
  const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
  const rows = new Map<string, Row>(summary.tasks.map((row: Row) => [row.name, row]));
  for (const name of ["alpha", "beta"]) {
    const branch = `cadre/${summary.run_id}/${name}`;
    expect(rows.get(name)).toMatchObject({ status: "succeeded", branch, base: start, diff_stat: "1 file changed, 1 insertion(+)" });
    expect(rows.get(name)?.commit).toBe(await git(repo, "rev-parse", branch));
    expect(await git(repo, "show", `${branch}:notes.txt`)).toBe(`line one\n${name}`);
  }
  // The reader changed nothing: no branch is left, and it read the file as the run started.
  expect(rows.get("reader")).toMatchObject({ status: "succeeded", branch: null, commit: null, base: start, diff_stat: "" });
  expect(summary.result.reader).toBe("read: 1\tline one\n2\t");

  expect(await readFile(join(repo, "notes.txt"), "utf8")).toBe("line one\n");
  expect(await git(repo, "status", "--porcelain")).toBe("");
  expect(await git(repo, "worktree", "list", "--porcelain")).toBe(`worktree ${repo}\nHEAD ${start}\nbranch refs/heads/main`);
  expect((await readdir(tmpdir())).filter((name) => name.startsWith(`cadre-worktrees-${summary.run_id}`))).toEqual([]);
  const branches = (await git(repo, "branch", "--list", "cadre/*", "--format=%(refname:short)")).split("\n").sort();
  expect(branches).toEqual([`cadre/${summary.run_id}/alpha`, `cadre/${summary.run_id}/beta`]);
  await git(repo, "branch", "-D", ...branches);
  return rows;
}

async function write(dir: string) {
  await mkdir(join(dir, ".claude", "agents"), { recursive: true });
  await writeFile(join(dir, "notes.txt"), "line one\n");
  await writeFile(join(dir, "edit.js"), SCRIPT);
  await writeFile(join(dir, "edit.rehearsal.yaml"), REHEARSAL);
  await writeFile(join(dir, ".claude", "agents", "editor.md"), EDITOR);
}

describe("agent() with isolation: 'worktree'", () => {
  it("each agent edits its own worktree; its branch holds the work, and the checkout is untouched", { timeout: 240_000 }, async ({ tmp }) => {
    const repo = join(tmp, "repo");
    const start = await repository(repo);
    const out = join(tmp, "out");
    const ran = await run(repo, out);
    expect(ran.exitCode, ran.stderr).toBe(0);
    await expectWorkOnBranches(repo, start, out);
  });

  it("on cadre worker hosts (--redis) the worktrees are made where cadre run runs, and the hosts' agents work in them", {
    timeout: 240_000,
  }, async ({ tmp }) => {
    const redis = await startRedis();
    // Under --rehearse each host plays the script's replies; this server only has to exist.
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    await startHost(redis, model, { name: "host-a", script: "unused" });
    await startHost(redis, model, { name: "host-b", script: "unused" });
    const repo = join(tmp, "repo");
    const start = await repository(repo);
    const out = join(tmp, "out");
    const ran = await run(repo, out, "--redis", redis.url);
    expect(ran.exitCode, ran.stderr).toBe(0);
    const rows = await expectWorkOnBranches(repo, start, out);
    for (const row of rows.values()) expect(["host-a", "host-b"]).toContain(row.host);
  });

  it("outside a git repository the call throws in the script before any worker starts, as in Claude Code", { timeout: 120_000 }, async ({ tmp }) => {
    const dir = join(tmp, "plain");
    await mkdir(dir);
    await write(dir);
    const out = join(tmp, "out");
    const ran = await run(dir, out);
    // parallel() turns its two throws into nulls; the reader's throw ends the script.
    expect(ran.exitCode, ran.stderr).toBe(1);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8"));
    // The script did not catch it: its error, as any error the script throws.
    expect(summary.error).toMatchObject({
      code: "WORKFLOW_SCRIPT_FAILED",
      message: expect.stringContaining("isolation 'worktree' needs a git repository"),
    });
    expect(summary.logs).toEqual([expect.stringMatching(/^parallel\[0\] failed: /), expect.stringMatching(/^parallel\[1\] failed: /)]);
    for (const row of summary.tasks as Row[]) {
      expect(row).toMatchObject({ status: "failed", result: null, error: { code: "WORKTREE_FAILED" } });
      expect(row.error).toMatchObject({ message: expect.stringContaining("isolation 'worktree' needs a git repository") });
    }
    for (const row of summary.tasks) expect(row.session_id ?? null).toBeNull();
    expect(existsSync(join(dir, ".git"))).toBe(false);
  });
});
