/**
 * The worktrees of a workflow run's `isolation: 'worktree'` calls: cadre's run
 * worktrees (those of a swarm task with `worktree: true`), one per call, made
 * from the commit checked out in the project when the first one is asked for.
 */
import type { TaskResult } from "../orchestrator/index.ts";
import { findRepository, type OpenWorktree, type RepositoryCheck, RunWorktrees, WorktreeError, type WorktreeOutcome } from "../swarm/index.ts";
import type { IsolatedWorker } from "../workflow/index.ts";

/** An isolated call's worktree while it runs: made in its slot, closed when its task ends. */
export interface CallWorktree {
  prepare: IsolatedWorker;
  /** Commits the call's work to its branch and removes the worktree; a failure to do so fails the call. */
  close(result: TaskResult): Promise<TaskResult>;
}

export class WorkflowWorktrees {
  readonly #worktrees: RunWorktrees;
  readonly #cwd: string;
  #repository: Promise<RepositoryCheck> | undefined;
  /** By row name: what each isolated call's worktree came to, for its row of the record. */
  readonly outcomes = new Map<string, WorktreeOutcome>();

  constructor(runId: string, cwd: string) {
    this.#worktrees = new RunWorktrees(runId, false);
    this.#cwd = cwd;
  }

  /** The worktree of the call whose row is `name`, on the branch cadre/<run-id>/<name>. */
  forCall(name: string): CallWorktree {
    let open: OpenWorktree | undefined;
    const prepare: IsolatedWorker = async () => {
      this.#repository ??= findRepository(this.#cwd);
      const repository = await this.#repository;
      if (!repository.ok) throw new WorktreeError(`agent(): isolation 'worktree' needs a git repository: ${repository.reason}`);
      open = await this.#worktrees.open({ task: name, repo: repository.root, cwd: this.#cwd, base: repository.head });
      return { cwd: open.cwd };
    };
    const close = async (result: TaskResult): Promise<TaskResult> => {
      if (open === undefined) return result;
      try {
        this.outcomes.set(name, await this.#worktrees.close(open, result.status));
        return result;
      } catch (error) {
        const { code, message } = error as { code: string; message: string };
        return { ...result, status: "failed", error: { code, message } };
      }
    };
    return { prepare, close };
  }

  /** For a process about to die: removes the open worktrees at once (RunWorktrees.discardSync). */
  discardSync(): void {
    this.#worktrees.discardSync();
  }

  /** Removes the run's worktree directory once every call's worktree is closed. */
  dispose(): Promise<void> {
    return this.#worktrees.dispose();
  }
}
