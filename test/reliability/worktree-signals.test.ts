// `cadre run script.js` whose agents work in git worktrees, stopped by a signal while they work: each agent's written
// file ends on its branch, named in its row; no worktree, branch without work, or temp folder is left; no row says running.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, readRunRecord } from "../support/cli.ts";
import { until } from "../support/wait.ts";

// Two: as many as the machine's cores start at once under auto concurrency.
const AGENTS = ["alpha", "beta"];
const EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

const SCRIPT = `export const meta = { name: "write", description: "agents write a file each, in their own worktrees, then think a long time" }
return await parallel(${JSON.stringify(AGENTS)}.map((label) => () => agent("write your file", { label, isolation: "worktree", agentType: "editor" })))
`;

const EDITOR = `---
name: editor
description: Writes files
permissionMode: acceptEdits
---
You write the file you are told to.
`;

const rehearsal = Object.fromEntries(
  AGENTS.map((name) => [
    name,
    [{ tool_use: { name: "Write", input: { file_path: `${name}.txt`, content: `${name} was here\n` } } }, { text: "written", delay_ms: 60_000 }],
  ]),
);

interface Row {
  name: string;
  label?: string;
  status: string;
  branch?: string | null;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-worktree-signals-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd })).stdout.trim();
}

/** A repository holding the script, its replies and the editor agent, and a temp folder of its own for the run. */
async function project(name: string): Promise<{ repo: string; tmp: string; out: string }> {
  const repo = join(dir, name);
  const tmp = join(dir, `${name}-tmp`);
  await mkdir(join(repo, ".claude", "agents"), { recursive: true });
  await mkdir(tmp);
  await writeFile(join(repo, "write.js"), SCRIPT);
  await writeFile(join(repo, "write.rehearsal.json"), JSON.stringify(rehearsal));
  await writeFile(join(repo, ".claude", "agents", "editor.md"), EDITOR);
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "add", ".");
  await git(repo, "commit", "--quiet", "-m", "start");
  return { repo, tmp, out: join(dir, `${name}-out`) };
}

/** Every agent's file is in its worktree (its Write tool ran). */
async function filesWritten(tmp: string): Promise<true | undefined> {
  const folders = (await readdir(tmp)).filter((name) => name.startsWith("cadre-worktrees-"));
  const written = folders.flatMap((folder) => AGENTS.filter((agent) => existsSync(join(tmp, folder, agent, `${agent}.txt`))));
  return written.length === AGENTS.length || undefined;
}

/** What was left, file by file: each agent's file on the branch its row names, and nothing else of the run's. */
async function expectWorkKept(repo: string, tmp: string, out: string): Promise<void> {
  const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { complete: boolean; tasks: Row[] };
  const rows = summary.tasks;
  expect(rows.filter((row) => row.status === "running" || row.status === "pending")).toEqual([]);
  const kept: string[] = [];
  for (const agent of AGENTS) {
    const row = rows.find((r) => (r.label ?? r.name) === agent);
    expect(row?.branch, `${agent}'s row names no branch`).toEqual(expect.any(String));
    if (typeof row?.branch === "string" && (await git(repo, "show", `${row.branch}:${agent}.txt`)) === `${agent} was here`) kept.push(agent);
  }
  expect(kept).toEqual(AGENTS);
  expect(await git(repo, "worktree", "list", "--porcelain")).toMatch(/^worktree [^\n]+\nHEAD [0-9a-f]+\nbranch refs\/heads\/main$/);
  const branches = (await git(repo, "branch", "--list", "cadre/*", "--format=%(refname:short)")).split("\n").filter(Boolean);
  expect(branches.sort()).toEqual(rows.flatMap((row) => (row.branch ? [row.branch] : [])).sort());
  expect((await readdir(tmp)).filter((name) => name.startsWith("cadre-worktrees-"))).toEqual([]);
  expect(await git(repo, "status", "--porcelain")).toBe("");
}

describe("a workflow whose agents work in worktrees, stopped by a signal", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "%s: each agent's file is on its branch, nothing else is left",
    { timeout: 120_000 },
    async (signal) => {
      const { repo, tmp, out } = await project(`graceful-${signal}`);
      const child = execa("node", [bin, "run", "write.js", "--rehearse", "--out", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
      await until(() => filesWritten(tmp), 60_000, "every agent's file");
      child.kill(signal);
      const run = await child;
      expect(run.exitCode, run.stderr).toBe(EXIT_CODES[signal]);
      await expectWorkKept(repo, tmp, out);
    },
  );

  it("a second signal kills at once: each agent's file is still committed to its branch, nothing else is left", { timeout: 120_000 }, async () => {
    const { repo, tmp, out } = await project("second-signal");
    const child = execa("node", [bin, "run", "write.js", "--rehearse", "--out", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
    await until(() => filesWritten(tmp), 60_000, "every agent's file");
    child.kill("SIGINT");
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode, run.stderr).toBe(130);
    await expectWorkKept(repo, tmp, out);
  });

  it("SIGKILL: the record names each agent's worktree and branch, and the worktree holds its file", { timeout: 120_000 }, async () => {
    const { repo, tmp, out } = await project("sigkill");
    const child = execa("node", [bin, "run", "write.js", "--rehearse", "--out", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
    await until(() => filesWritten(tmp), 60_000, "every agent's file");
    child.kill("SIGKILL");
    await child;
    const record = await readRunRecord(out);
    for (const agent of AGENTS) {
      const row = record.tasks.find((r) => (r as Row).label === agent);
      expect(row?.branch).toMatch(new RegExp(`^cadre/.+/${agent}$`));
      expect(await readFile(join(row!.worktree!, `${agent}.txt`), "utf8")).toBe(`${agent} was here\n`);
      expect(await git(row!.worktree!, "rev-parse", "--abbrev-ref", "HEAD")).toBe(row?.branch);
    }
  });

  it("SIGKILL, then --resume: the killed run's worktrees are taken over, and each agent's file ends on its new branch", {
    timeout: 180_000,
  }, async () => {
    const { repo, tmp, out } = await project("resumed");
    const child = execa("node", [bin, "run", "write.js", "--rehearse", "--out", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
    await until(() => filesWritten(tmp), 60_000, "every agent's file");
    child.kill("SIGKILL");
    await child;
    // The resumed agents write nothing: what their branches hold is what the killed run's agents wrote.
    const written = Object.fromEntries(AGENTS.map((name) => [name, [{ text: "written" }, { text: "written" }, { text: "written" }]]));
    await writeFile(join(repo, "write.rehearsal.json"), JSON.stringify(written));
    await git(repo, "commit", "--quiet", "-am", "replies for the resume");
    const resumed = await execa("node", [bin, "run", "write.js", "--rehearse", "--resume", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    await expectWorkKept(repo, tmp, out);
  });

  it("a swarm's worktree tasks, SIGKILL, then --resume: each task's file ends on its new branch", { timeout: 180_000 }, async () => {
    const { repo, tmp, out } = await project("swarm-resumed");
    const swarm = (replies: Record<string, unknown>) =>
      JSON.stringify({
        defaults: { permission_mode: "acceptEdits", worktree: true },
        tasks: AGENTS.map((name) => ({ name, prompt: "write your file" })),
        rehearsal: replies,
      });
    await writeFile(join(repo, "swarm.json"), swarm(rehearsal));
    await git(repo, "add", "swarm.json");
    await git(repo, "commit", "--quiet", "-m", "the swarm");
    const child = execa("node", [bin, "run", "swarm.json", "--rehearse", "--out", out], { cwd: repo, reject: false, env: { TMPDIR: tmp } });
    await until(() => filesWritten(tmp), 60_000, "every task's file");
    child.kill("SIGKILL");
    await child;
    const written = Object.fromEntries(AGENTS.map((name) => [name, [{ text: "written" }, { text: "written" }, { text: "written" }]]));
    await writeFile(join(repo, "swarm.json"), swarm(written));
    await git(repo, "commit", "--quiet", "-am", "replies for the resume");
    const resumed = await execa("node", [bin, "run", "swarm.json", "--rehearse", "--resume", out], {
      cwd: repo,
      reject: false,
      env: { TMPDIR: tmp },
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    await expectWorkKept(repo, tmp, out);
  });
});
