// Worktrees of a run on a real git repository: many at once, a lock another program holds, kept and discarded ones.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { branchComponent, RunWorktrees } from "../../src/swarm/worktree.ts";

let dir: string;
let repo: string;
let start: string;

/** git in the test repository, with an identity given on the command line (none is configured). */
async function git(args: string[], cwd = repo): Promise<string> {
  return (await execa("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd })).stdout.trim();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-worktree-"));
  repo = join(dir, "repo");
  await mkdir(join(repo, "sub"), { recursive: true });
  await git(["init", "--quiet", "--initial-branch=main"]);
  await writeFile(join(repo, "shared.txt"), "start\n");
  await writeFile(join(repo, "sub", "keep.txt"), "sub\n");
  await git(["add", "."]);
  await git(["commit", "--quiet", "-m", "start"]);
  start = await git(["rev-parse", "HEAD"]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function branches(prefix: string): Promise<string[]> {
  const listed = await git(["branch", "--list", `${prefix}/*`, "--format=%(refname:short)"]);
  return listed === "" ? [] : listed.split("\n").sort();
}

describe("RunWorktrees", () => {
  it("opens and closes twelve worktrees at once on one repository without tripping over git's locks", async () => {
    const run = new RunWorktrees("many", false);
    const names = Array.from({ length: 12 }, (_, i) => `task ${i}`);
    const outcomes = await Promise.all(
      names.map(async (task, i) => {
        const open = await run.open({ task, repo, cwd: join(repo, "sub"), base: start });
        expect(open.cwd).toBe(join(open.path, "sub"));
        if (i % 3 !== 0) await writeFile(join(open.path, "shared.txt"), `${task}\n`);
        return run.close(open, "succeeded");
      }),
    );
    await run.dispose();
    expect(outcomes.filter((o) => o.branch === null)).toHaveLength(4);
    const changed = names.filter((_, i) => i % 3 !== 0);
    expect(await branches("cadre/many")).toEqual(changed.map((task) => `cadre/many/${branchComponent(task)}`).sort());
    for (const task of changed) expect(await git(["show", `cadre/many/${branchComponent(task)}:shared.txt`])).toBe(task);
    expect(await git(["worktree", "list", "--porcelain"])).toBe(`worktree ${repo}\nHEAD ${start}\nbranch refs/heads/main`);
    expect(await git(["status", "--porcelain"])).toBe("");
  });

  it("waits out a lock file another program holds", async () => {
    const run = new RunWorktrees("locked", false);
    const lock = join(repo, ".git", "refs", "heads", "cadre", "locked", "held.lock");
    await mkdir(dirname(lock), { recursive: true });
    await writeFile(lock, "");
    const released = new Promise<void>((resolve) => setTimeout(() => rm(lock).then(() => resolve()), 300));
    const open = await run.open({ task: "held", repo, cwd: repo, base: "main" });
    await released;
    await writeFile(join(open.path, "new.txt"), "new\n");
    expect(await run.close(open, "succeeded")).toMatchObject({
      branch: "cadre/locked/held",
      base: start,
      diffStat: "1 file changed, 1 insertion(+)",
    });
    await run.dispose();
  });

  it("keeps worktrees when asked, and names a bad base or a directory missing from it", async () => {
    const run = new RunWorktrees("kept", true);
    const open = await run.open({ task: "t", repo, cwd: repo, base: start });
    await writeFile(join(open.path, "shared.txt"), "kept\n");
    const outcome = await run.close(open, "succeeded");
    expect(outcome.path).toBe(open.path);
    expect(existsSync(join(open.path, "shared.txt"))).toBe(true);
    await run.dispose();
    expect(existsSync(open.path)).toBe(true);
    await git(["worktree", "remove", "--force", open.path]);

    await expect(run.open({ task: "u", repo, cwd: repo, base: "no-such-branch" })).rejects.toMatchObject({
      code: "WORKTREE_FAILED",
      message: `worktree base "no-such-branch" is not a commit, branch or tag of ${repo}`,
    });
    await mkdir(join(repo, "untracked-dir"));
    await expect(run.open({ task: "v", repo, cwd: join(repo, "untracked-dir"), base: start })).rejects.toMatchObject({
      code: "WORKTREE_FAILED",
      message: `the task's directory untracked-dir does not exist at ${start} (is it committed?)`,
    });
    await rm(join(repo, "untracked-dir"), { recursive: true });
    expect(await branches("cadre/kept")).toEqual(["cadre/kept/t"]);
    // With no worktree left in it, the run's directory goes too.
    await run.dispose();
    expect(existsSync(dirname(open.path))).toBe(false);
  });

  it("a killed run commits each open worktree's work to its branch at once, and keeps only branches that hold work", async () => {
    const run = new RunWorktrees("killed", false);
    const idle = await run.open({ task: "idle", repo, cwd: repo, base: start });
    const dirty = await run.open({ task: "dirty", repo, cwd: repo, base: start });
    const committed = await run.open({ task: "committed", repo, cwd: repo, base: start });
    await writeFile(join(dirty.path, "shared.txt"), "uncommitted\n");
    await writeFile(join(committed.path, "shared.txt"), "committed\n");
    await git(["commit", "--quiet", "-am", "by the agent"], committed.path);
    const outcomes = run.discardSync();
    for (const open of [idle, dirty, committed]) expect(existsSync(open.path)).toBe(false);
    expect(await branches("cadre/killed")).toEqual(["cadre/killed/committed", "cadre/killed/dirty"]);
    expect(await git(["show", "cadre/killed/dirty:shared.txt"], repo)).toBe("uncommitted");
    expect(Object.fromEntries([...outcomes].map(([task, outcome]) => [task, outcome.branch]))).toEqual({
      idle: null,
      dirty: "cadre/killed/dirty",
      committed: "cadre/killed/committed",
    });
    await run.dispose();
    expect(await readdir(tmpdir())).not.toContain(dirname(idle.path).split("/").at(-1));
  });
});

describe("branchComponent", () => {
  it("makes any task name a valid branch component", async () => {
    const names = ["review src/a.ts", "..hidden", "-dash", "x.lock", "a..b", "ünïcode", "", "tail."];
    const components = names.map(branchComponent);
    expect(components).toEqual(["review-src-a.ts", "hidden", "dash", "x", "a.b", "n-code", "task", "tail"]);
    for (const component of components) await git(["check-ref-format", "--branch", `cadre/run/${component}`]);
  });
});
