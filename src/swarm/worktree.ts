// A task's git worktree: made on its own branch before it runs, committed and removed after.
import { rmSync } from "node:fs";
import { mkdtemp, realpath, rm, rmdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { CadreError } from "../errors.ts";
import { GitRepo, git } from "./git.ts";

/** A task's worktree could not be made (an unknown base, a directory missing from it, a git failure). */
export class WorktreeError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("WORKTREE_FAILED", message, options);
  }
}

/** Where a task works in its own worktree. */
export interface WorktreeRequest {
  task: string;
  /** The repository's top level. */
  repo: string;
  /** The directory the task would work in, inside `repo`; it works in the same place inside its worktree. */
  cwd: string;
  /** The commit (or branch, tag) to start from. */
  base: string;
}

/** A worktree in use by a running task. */
export interface OpenWorktree {
  task: string;
  repo: GitRepo;
  branch: string;
  /** The worktree's top level. */
  path: string;
  /** The task's directory inside it. */
  cwd: string;
  /** The commit it started from. */
  base: string;
  /** The branch of the killed run's worktree this one goes on from (see RunWorktrees.takeOver). */
  continues?: string;
}

/** A worktree a killed run left, as its record names it. */
export interface LeftWorktree {
  task: string;
  branch: string;
  path: string;
  base: string;
}

/** What a task's worktree came to, for summary.json. */
export interface WorktreeOutcome {
  /** The branch holding the task's work; null when it changed nothing (then no branch is left). */
  branch: string | null;
  /** The branch's last commit; null with no branch. */
  commit: string | null;
  /** The commit it started from. */
  base: string;
  /** `git diff --shortstat` from base to commit: "2 files changed, 5 insertions(+), 1 deletion(-)"; "" with no change. */
  diffStat: string;
  /** The worktree, when it was kept (keep_worktrees). */
  path: string | null;
}

/** `review src/a.ts` → `review-src-a.ts`: a name git accepts as one path component of a branch. */
export function branchComponent(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.-]+/, "")
    .replace(/(\.lock|\.)+$/i, "");
  return cleaned === "" ? "task" : cleaned;
}

const COMMITTER = ["-c", "user.name=cadre", "-c", "user.email=cadre@localhost"];

/**
 * The worktrees of one run: each task that asks for one gets a new branch
 * `cadre/<run-id>/<task>` checked out in a directory of its own (outside the
 * repository, so the starting checkout stays as it was). When the task ends,
 * what it changed is committed to its branch and the worktree removed; a task
 * that changed nothing leaves no branch.
 */
export class RunWorktrees {
  readonly #open = new Set<OpenWorktree>();
  /** The work killed runs left, by task: the task's new worktree starts from it (takeOver). */
  readonly #continued = new Map<string, { branch: string; commit: string }>();
  readonly #branches = new Set<string>();
  #dir: Promise<string> | undefined;
  /** The run's worktree directory once made, for discardSync. */
  #madeDir: string | undefined;

  /** `opened`: told of each worktree as it is made, before its task works in it (the record names it, for a kill). */
  constructor(
    readonly runId: string,
    readonly keep: boolean,
    readonly opened: (open: OpenWorktree) => void = () => {},
  ) {}

  /** The branch a task's work goes to, unique within the run. */
  branchFor(task: string): string {
    const stem = `cadre/${branchComponent(this.runId)}/${branchComponent(task)}`;
    let branch = stem;
    for (let n = 2; this.#branches.has(branch); n++) branch = `${stem}-${n}`;
    this.#branches.add(branch);
    return branch;
  }

  /** Whether the task's worktree is open: its work is not on its branch yet. */
  holds(task: string): boolean {
    for (const open of this.#open) if (open.task === task) return true;
    return false;
  }

  /**
   * For a resumed run: commits what each worktree a killed run left holds to
   * its branch and removes the worktree (and the run's temp folder once
   * empty). The task's new worktree starts from that commit, so a session that
   * goes on finds its files; its new branch then holds the work, and the old
   * branch goes. A branch that holds nothing new goes at once.
   */
  async takeOver(left: readonly LeftWorktree[]): Promise<void> {
    for (const { task, branch, path, base } of left) {
      const common = await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], path).catch(() => undefined);
      // Gone already (removed by hand, or the machine restarted): its branch, if any, is as it was committed.
      if (common === undefined) continue;
      const repo = GitRepo.at(dirname(common.stdout));
      const head = await this.#commitAll(repo, path, `cadre: task ${task} (killed) on ${branch}`).catch(() => undefined);
      await repo.run(["worktree", "remove", "--force", path]).catch(() => {});
      await rmdir(dirname(path)).catch(() => {});
      if (head === base) await repo.run(["branch", "-D", branch], { okExitCodes: [0, 1] });
      else if (head !== undefined) this.#continued.set(task, { branch, commit: head });
    }
  }

  async open(request: WorktreeRequest): Promise<OpenWorktree> {
    const repo = GitRepo.at(request.repo);
    const base = await repo.run(["rev-parse", "--verify", "--quiet", `${request.base}^{commit}`], { okExitCodes: [0, 1] });
    if (base.exitCode !== 0) throw new WorktreeError(`worktree base "${request.base}" is not a commit, branch or tag of ${request.repo}`);
    this.#dir ??= mkdtemp(join(tmpdir(), `cadre-worktrees-${branchComponent(this.runId)}-`));
    const branch = this.branchFor(request.task);
    this.#madeDir = await this.#dir;
    const path = join(this.#madeDir, branch.split("/").at(-1)!);
    const continued = this.#continued.get(request.task);
    this.#continued.delete(request.task);
    try {
      await repo.run(["worktree", "add", "--quiet", "-b", branch, path, continued?.commit ?? base.stdout]);
    } catch (error) {
      throw new WorktreeError(`could not make a worktree for task "${request.task}": ${(error as Error).message}`, { cause: error });
    }
    // git names the top level by its real path; the task's directory may be spelt through a symlink.
    const inside = relative(request.repo, await realpath(request.cwd).catch(() => request.cwd));
    const open: OpenWorktree = {
      task: request.task,
      repo,
      branch,
      path,
      cwd: join(path, inside),
      base: base.stdout,
      ...(continued && { continues: continued.branch }),
    };
    this.#open.add(open);
    const info = await stat(open.cwd).catch(() => undefined);
    if (info?.isDirectory() !== true) {
      await this.close(open, "failed");
      throw new WorktreeError(`the task's directory ${inside} does not exist at ${request.base} (is it committed?)`);
    }
    this.opened(open);
    return open;
  }

  /**
   * Commits what the task changed (tracked and new files; ignored ones stay
   * out) to its branch, then removes the worktree unless worktrees are kept,
   * and the branch too when it holds nothing new.
   */
  async close(open: OpenWorktree, status: string): Promise<WorktreeOutcome> {
    const { repo, path, branch, base } = open;
    this.#open.delete(open);
    let head: string;
    try {
      head = await this.#commitAll(repo, path, `cadre: task ${open.task} (${status}) in run ${this.runId}`);
    } catch (error) {
      await repo.run(["worktree", "remove", "--force", path]).catch(() => {});
      throw new WorktreeError(`could not commit the work of task "${open.task}" to ${branch}: ${(error as Error).message}`, { cause: error });
    }
    const changed = head !== base;
    const diffStat = changed ? (await repo.run(["diff", "--shortstat", base, head])).stdout : "";
    const kept = this.keep && changed;
    if (!kept) await repo.run(["worktree", "remove", "--force", path]);
    if (!changed) await repo.run(["branch", "-D", branch]);
    // The new branch holds the killed run's work too.
    if (open.continues !== undefined) await repo.run(["branch", "-D", open.continues], { okExitCodes: [0, 1] });
    return { branch: changed ? branch : null, commit: changed ? head : null, base, diffStat, path: kept ? path : null };
  }

  /** Commits what the worktree at `path` holds (tracked and new files; ignored ones stay out); resolves with its HEAD. */
  async #commitAll(repo: GitRepo, path: string, message: string): Promise<string> {
    await repo.run(["add", "--all"], { cwd: path });
    const staged = await repo.run(["diff", "--cached", "--quiet"], { cwd: path, okExitCodes: [0, 1] });
    if (staged.exitCode === 1) {
      const identity = await hasIdentity(repo, path);
      // --no-verify: the work is kept on its own branch whatever the repository's commit hooks think of it.
      await repo.run([...(identity ? [] : COMMITTER), "commit", "--quiet", "--no-verify", "-m", message], { cwd: path });
    }
    return (await repo.run(["rev-parse", "HEAD"], { cwd: path })).stdout;
  }

  /**
   * For a run killed outright: commits what each open worktree holds to its
   * branch, removes the worktree, and the branch when it holds nothing new.
   * Synchronous, because the process exits right after. Returns what each
   * task's worktree came to.
   */
  discardSync(): Map<string, WorktreeOutcome> {
    const outcomes = new Map<string, WorktreeOutcome>();
    for (const open of this.#open) {
      const { repo, path, branch, base } = open;
      const identity = repo.runSync(["config", "user.name"], path) && repo.runSync(["config", "user.email"], path);
      const message = `cadre: task ${open.task} (killed) in run ${this.runId}`;
      if (repo.runSync(["add", "--all"], path))
        repo.runSync([...(identity ? [] : COMMITTER), "commit", "--quiet", "--no-verify", "-m", message], path);
      repo.runSync(["worktree", "remove", "--force", path]);
      const changed = !repo.runSync(["merge-base", "--is-ancestor", branch, base]);
      if (!changed) repo.runSync(["branch", "-D", branch]);
      outcomes.set(open.task, { branch: changed ? branch : null, commit: null, base, diffStat: "", path: null });
    }
    this.#open.clear();
    if (this.#madeDir !== undefined && !this.keep) rmSync(this.#madeDir, { recursive: true, force: true });
    return outcomes;
  }

  /** Removes the run's worktree directory once every worktree is closed; kept worktrees keep it. */
  async dispose(): Promise<void> {
    if (this.#dir === undefined) return;
    const dir = await this.#dir;
    if (this.keep) await rmdir(dir).catch(() => {});
    else await rm(dir, { recursive: true, force: true });
  }
}

/** Whether git has a committer identity here (CI machines often have none; cadre then commits as "cadre"). */
async function hasIdentity(repo: GitRepo, cwd: string): Promise<boolean> {
  const name = await repo.run(["config", "user.name"], { cwd, okExitCodes: [0, 1] });
  const email = await repo.run(["config", "user.email"], { cwd, okExitCodes: [0, 1] });
  return name.exitCode === 0 && email.exitCode === 0;
}
