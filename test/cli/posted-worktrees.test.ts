// Tasks a lead agent posts as an agent with `worktree: true`, on real claude workers (--rehearse) in a temp git
// repository: each works in a worktree of its own, its file ends on the branch its row names, the checkout stays as it
// was; killed with SIGKILL and resumed, the killed run's worktrees are taken over and each file still ends on its branch.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import type { Summary } from "../../src/run/record/schema.ts";
import { bin, readRunRecord, readSummary } from "../support/cli.ts";
import { claudeDescendants, isGone } from "../support/processes.ts";
import { tempHome } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

// Valid posted names that git would refuse as they are in a branch (".." and a ".lock" end): the run makes them safe.
const POSTED = ["api..v2", "ui.lock"];
/** The branch component and worktree folder each posted name becomes. */
const FOLDER: Record<string, string> = { "api..v2": "api.v2", "ui.lock": "ui" };

/** The lead posts both tasks as the builder; each writes where it works and a file of its own with Bash, then answers (`delay_ms` later). */
function replies(delayMs = 0) {
  const post = (name: string) => ({ tool_use: { name: "mcp__cadre__post_task", input: { name, agent: "builder", prompt: `build ${name}` } } });
  const build = (name: string) => [
    { tool_use: { name: "Bash", input: { command: `pwd > where.txt && echo ${name} > built.txt`, description: "build" } } },
    { text: "built", delay_ms: delayMs },
  ];
  return { lead: [...POSTED.map(post), { text: "posted" }], ...Object.fromEntries(POSTED.map((name) => [name, build(name)])) };
}

function swarm(rehearsal: object): string {
  return JSON.stringify({
    defaults: { allowed_tools: ["Bash"] },
    agents: { builder: { description: "Builds one part", prompt: "You build.", worktree: true } },
    tasks: [{ name: "lead", prompt: "post the parts", post_tasks: true }],
    rehearsal,
  });
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd })).stdout.trim();
}

/** A repository holding the swarm file, a temp folder of the run's own (its worktrees go there), and where its record goes. */
async function project(rehearsal: object): Promise<{ repo: string; tmp: string; out: string }> {
  const dir = await tempHome("cadre-posted-worktrees-");
  const repo = join(dir, "repo");
  const tmp = join(dir, "tmp");
  await mkdir(repo);
  await mkdir(tmp);
  await writeFile(join(repo, "swarm.json"), swarm(rehearsal));
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "add", ".");
  await git(repo, "commit", "--quiet", "-m", "start");
  return { repo, tmp, out: join(dir, "out") };
}

/** A run of the swarm into `out`, or (`resume`) the resumed run of the one there. */
function run(project: { repo: string; tmp: string; out: string }, resume = false) {
  return execa("node", [bin, "run", "swarm.json", "--rehearse", resume ? "--resume" : "--out", project.out], {
    cwd: project.repo,
    reject: false,
    env: { TMPDIR: project.tmp },
  });
}

/** Each posted task's row names its branch, which holds its file; the checkout, its worktrees and branches are as they were. */
async function expectEachOnItsBranch(repo: string, tmp: string, summary: Summary): Promise<void> {
  expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null])).toEqual([
    ["lead", "succeeded", null],
    ...POSTED.map((name) => [name, "succeeded", "lead"]),
  ]);
  expect(summary.tasks[0]!.branch ?? null).toBeNull();
  for (const name of POSTED) {
    const row = summary.tasks.find((t) => t.name === name)!;
    expect(row.branch).toMatch(new RegExp(`^cadre/[^/]+/${FOLDER[name]!.replace(".", "\\.")}$`));
    expect(await git(repo, "show", `${row.branch}:built.txt`)).toBe(name);
  }
  expect(await git(repo, "worktree", "list", "--porcelain")).toMatch(/^worktree [^\n]+\nHEAD [0-9a-f]+\nbranch refs\/heads\/main$/);
  const branches = (await git(repo, "branch", "--list", "cadre/*", "--format=%(refname:short)")).split("\n").filter(Boolean);
  expect(branches.sort()).toEqual(summary.tasks.flatMap((row) => (row.branch ? [row.branch] : [])).sort());
  expect(await git(repo, "status", "--porcelain")).toBe("");
  expect(existsSync(join(repo, "built.txt"))).toBe(false);
  expect((await readdir(tmp)).filter((name) => name.startsWith("cadre-worktrees-"))).toEqual([]);
}

describe("tasks posted as an agent with a worktree", () => {
  it("work each in a worktree of its own, and leave their work on the branch their row names", { timeout: 120_000 }, async () => {
    const { repo, tmp, out } = await project(replies());
    const done = await run({ repo, tmp, out });
    expect(done.exitCode, done.stderr + done.stdout).toBe(0);
    const summary = await readSummary(out);
    await expectEachOnItsBranch(repo, tmp, summary);
    // Each worked in its own worktree, outside the repository: not the checkout, not each other's.
    const where = await Promise.all(POSTED.map(async (name) => git(repo, "show", `${summary.tasks.find((t) => t.name === name)!.branch}:where.txt`)));
    expect(new Set(where).size).toBe(POSTED.length);
    for (const [k, name] of POSTED.entries()) {
      expect(where[k]!.startsWith(`${tmp}/cadre-worktrees-`), where[k]).toBe(true);
      expect(where[k]!.endsWith(`/${FOLDER[name]}`), where[k]).toBe(true);
    }
  });

  it("killed with SIGKILL while they work, then resumed: the record named their worktrees, and each file ends on its new branch", {
    timeout: 180_000,
  }, async () => {
    const { repo, tmp, out } = await project(replies(60_000));
    const first = run({ repo, tmp, out });
    // Whatever the test finds, the killed run is gone at its end (its reaper ends its workers).
    onTestFinished(() => void first.kill("SIGKILL"));
    // Both posted tasks wrote their file and wait on their answer: the record names their worktrees.
    const record = await until(
      async () => {
        const rows = existsSync(out) ? (await readRunRecord(out).catch(() => undefined))?.tasks : undefined;
        const working = rows?.filter((t) => t.posted_by === "lead" && typeof t.worktree === "string" && existsSync(join(t.worktree, "built.txt")));
        return working?.length === POSTED.length ? working : undefined;
      },
      60_000,
      "both posted tasks' files in their worktrees",
    );
    for (const row of record) expect(await readFile(join(row.worktree!, "built.txt"), "utf8")).toBe(`${row.name}\n`);
    const children = await claudeDescendants(first.pid!);
    first.kill("SIGKILL");
    await first;
    for (const pid of children) process.kill(pid, "SIGKILL");
    for (const pid of children) await isGone(pid);

    // The resumed tasks write nothing: what their branches hold is what the killed run's tasks wrote.
    const answers = Object.fromEntries(POSTED.map((name) => [name, [{ text: "built" }, { text: "built" }, { text: "built" }]]));
    await writeFile(join(repo, "swarm.json"), swarm({ ...replies(), ...answers }));
    await git(repo, "commit", "--quiet", "-am", "replies for the resume");
    const resumed = await run({ repo, tmp, out }, true);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    await expectEachOnItsBranch(repo, tmp, await readSummary(out));
  });
});
