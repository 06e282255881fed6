// git commands for worktrees: one repository's commands one at a time, a lock another program holds waited out.
import { setTimeout as sleep } from "node:timers/promises";
import { execa, execaSync } from "execa";
import PQueue from "p-queue";
import { CadreError } from "../errors.ts";
import { backoffDelay } from "../util/backoff.ts";

/** A git command that failed: its arguments and what git said. */
export class GitError extends CadreError {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    options?: { cause?: unknown },
  ) {
    super("GIT_FAILED", `git ${args.join(" ")} failed: ${reason(stderr)}`, options);
  }
}

/** What git says went wrong: its fatal or error line (advice follows it), else its last line. */
function reason(stderr: string): string {
  const lines = stderr.trim().split("\n");
  return (lines.find((line) => /^(fatal|error): /.test(line)) ?? lines.at(-1)) || "no message";
}

/**
 * Variables that would point git somewhere other than the directory it is
 * run in (set when cadre itself runs inside a git hook).
 */
const REDIRECTING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"];

function gitEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, GIT_TERMINAL_PROMPT: "0" };
  for (const name of REDIRECTING) delete env[name];
  return env;
}

/** Another git process (the user's, an editor's) holds one of git's lock files. */
function isLockContention(stderr: string): boolean {
  return /\.lock'?: File exists|Unable to create '[^']*\.lock'|cannot lock ref/i.test(stderr);
}

const LOCK_RETRIES = 8;

/** The wait before the next try at a locked repository: from 50 ms, doubling up to 800 ms. */
function lockDelay(attempt: number): number {
  return backoffDelay(attempt, 50, 800);
}

export interface GitResult {
  stdout: string;
  exitCode: number;
}

/**
 * Git on one repository, one command at a time: worktree, branch and commit
 * commands of parallel tasks touch the same refs and worktree list, so cadre
 * queues them per repository rather than rely on git's lock files alone, and
 * waits out a lock another program holds.
 */
export class GitRepo {
  static readonly #byRoot = new Map<string, GitRepo>();
  readonly #queue = new PQueue({ concurrency: 1 });

  private constructor(readonly root: string) {}

  /** The one instance for the repository whose top level is `root`. */
  static at(root: string): GitRepo {
    let repo = GitRepo.#byRoot.get(root);
    if (repo === undefined) {
      repo = new GitRepo(root);
      GitRepo.#byRoot.set(root, repo);
    }
    return repo;
  }

  /**
   * Runs `git <args>` in `cwd` (default: the top level), after the commands
   * queued before it. Exit codes in `okExitCodes` (default [0]) resolve;
   * others throw a GitError.
   */
  run(args: string[], options: { cwd?: string; okExitCodes?: number[] } = {}): Promise<GitResult> {
    return this.#queue.add(() => git(args, options.cwd ?? this.root, options.okExitCodes));
  }

  /** For the last moments of a killed run, when nothing can be awaited: runs at once, ignoring the queue. */
  runSync(args: string[], cwd: string = this.root): boolean {
    for (let attempt = 0; attempt <= LOCK_RETRIES; attempt++) {
      const result = execaSync("git", args, { cwd, env: gitEnv(), extendEnv: false, reject: false, stdin: "ignore" });
      if (result.exitCode === 0) return true;
      if (!isLockContention(String(result.stderr))) return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, lockDelay(attempt));
    }
    return false;
  }
}

/** Runs git once, retrying only while another process holds a lock file. */
export async function git(args: string[], cwd: string, okExitCodes: number[] = [0]): Promise<GitResult> {
  for (let attempt = 0; ; attempt++) {
    const result = await execa("git", args, { cwd, env: gitEnv(), extendEnv: false, reject: false, stdin: "ignore" });
    const exitCode = result.exitCode ?? -1;
    if (okExitCodes.includes(exitCode)) return { stdout: String(result.stdout).trim(), exitCode };
    const stderr = String(result.stderr || result.message || "");
    if (attempt >= LOCK_RETRIES || !isLockContention(stderr)) throw new GitError(args, stderr, { cause: result });
    await sleep(lockDelay(attempt));
  }
}

/** Where `dir` is in a git repository, or why it is not usable for worktrees. */
export type RepositoryCheck = { ok: true; root: string; head: string } | { ok: false; reason: string };

/** The repository `dir` is in and the commit checked out there. */
export async function findRepository(dir: string): Promise<RepositoryCheck> {
  let root: string;
  try {
    root = (await git(["rev-parse", "--show-toplevel"], dir)).stdout;
  } catch (error) {
    const missing = error instanceof GitError && /ENOENT/.test(error.stderr);
    return { ok: false, reason: missing ? "git is not installed (or not on PATH)" : `${dir} is not inside a git repository` };
  }
  const head = await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root, [0, 1]);
  if (head.exitCode !== 0) return { ok: false, reason: `the git repository ${root} has no commit yet to start worktrees from` };
  return { ok: true, root, head: head.stdout };
}
