/**
 * The worktrees of a workflow run's `isolation: 'worktree'` calls: the run's
 * worktrees (those of a swarm task with `worktree: true`), one per call, made
 * from the commit checked out in the project when the first one is asked for.
 * The run disposes of them; its record gets each call's outcome from its task_settled.
 */
import type { TaskResult } from "../orchestrator/index.ts";
import { findRepository, type OpenWorktree, type RepositoryCheck, type RunWorktrees, WorktreeError, type WorktreeOutcome } from "../swarm/index.ts";
import type { IsolatedWorker } from "../workflow/index.ts";

/** An isolated call's worktree while it runs: made in its slot, closed when its task ends. */
export interface CallWorktree {
  prepare: IsolatedWorker;
  /** Commits the call's work to its branch and removes the worktree; a failure to do so fails the call. */
  close(result: TaskResult): Promise<TaskResult>;
  /** What the worktree came to, once closed. */
  outcome(): WorktreeOutcome | undefined;
}

export class WorkflowWorktrees {
  readonly #worktrees: RunWorktrees;
  readonly #cwd: string;
  #repository: Promise<RepositoryCheck> | undefined;

  constructor(worktrees: RunWorktrees, cwd: string) {
    this.#worktrees = worktrees;
    this.#cwd = cwd;
  }

  /** The project's repository; throws, as the CLI's agent() does, when it is none: an isolated call cannot run there. */
  async repository(): Promise<Extract<RepositoryCheck, { ok: true }>> {
    this.#repository ??= findRepository(this.#cwd);
    const repository = await this.#repository;
    if (!repository.ok) throw new WorktreeError(`agent(): isolation 'worktree' needs a git repository: ${repository.reason}`);
    return repository;
  }

  /** The worktree of the call whose row is `name`, on the branch cadre/<run-id>/<name>. */
  forCall(name: string): CallWorktree {
    let open: OpenWorktree | undefined;
    let outcome: WorktreeOutcome | undefined;
    const prepare: IsolatedWorker = async () => {
      const repository = await this.repository();
      open = await this.#worktrees.open({ task: name, repo: repository.root, cwd: this.#cwd, base: repository.head });
      return { cwd: open.cwd };
    };
    const close = async (result: TaskResult): Promise<TaskResult> => {
      if (open === undefined) return result;
      try {
        outcome = await this.#worktrees.close(open, result.status);
        return result;
      } catch (error) {
        const { code, message } = error as { code: string; message: string };
        return { ...result, status: "failed", error: { code, message } };
      }
    };
    return { prepare, close, outcome: () => outcome };
  }
}
