import { randomUUID } from "node:crypto";
import { resultWithoutTurn, type TaskResult, type TaskRunner, type TaskStatus } from "../orchestrator/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask, type ResultFields, taskSpecFor } from "./config/index.ts";
import { type OpenWorktree, RunWorktrees, type WorktreeOutcome } from "./worktree.ts";

/** Codes of the results the runner decides itself, without a worker. */
export const DEPENDENCY_FAILED = "DEPENDENCY_FAILED";
export const INTERRUPTED = "INTERRUPTED";

/**
 * A config task has its result. `started` is false when the swarm settled it
 * without handing it to the orchestrator (a dependency did not succeed, the
 * run was interrupted first, or the orchestrator refused it): no orchestrator
 * event tells about such a task.
 */
export interface TaskSettledEvent {
  type: "task_settled";
  task: { name: string; agent: string | undefined };
  result: TaskResult;
  started: boolean;
  /** Set for a task that worked in its own git worktree: its branch and commit, or that it changed nothing. */
  worktree?: WorktreeOutcome;
}

/** What a swarm run reports beyond the orchestrator's events. */
export type SwarmEvent = TaskSettledEvent;

export interface RunSwarmOptions {
  config: ResolvedSwarmConfig;
  /** Where a ready task starts: the orchestrator here, or the coordinator of a distributed run. */
  orchestrator: TaskRunner;
  /** Aborted by the first Ctrl-C: nothing new starts, running tasks are stopped. */
  signal: AbortSignal;
  /**
   * The worktrees of tasks that ask for one (the caller keeps it to discard
   * them if the run is killed). Default: a new set named after a fresh run id.
   */
  worktrees?: RunWorktrees;
}

/** `20250601-123005-3f2a`: when the run started, and a few random characters so that two runs never share branch names. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replaceAll(/[-:]/g, "")
    .replace("T", "-");
  return `${stamp}-${randomUUID().slice(0, 4)}`;
}

/** A result for a task that never ran. */
export function unrunResult(task: ResolvedTask, status: TaskStatus, error: { code: string; message: string }): TaskResult {
  return resultWithoutTurn({ id: randomUUID().slice(0, 8), name: task.name, agent: task.agent }, status, error);
}

/**
 * Runs a swarm's tasks in dependency order: a task is handed to the
 * orchestrator (which applies the concurrency limits, retries and budget)
 * once every task it depends on has succeeded, with {{results.x}} filled in
 * from their final texts. A task whose dependency did not succeed is skipped
 * and says which one. Starts at once; the stream has one task_settled event
 * per task, in the order they settle, and ends when every task has one.
 */
export function runSwarm({ config, orchestrator, signal, worktrees: given }: RunSwarmOptions): AsyncIterable<SwarmEvent> {
  const events = new AsyncQueue<SwarmEvent>();
  const results = new Map<string, TaskResult>();
  const outcomes = new Map<string, WorktreeOutcome>();
  const waiting = new Set(config.tasks);
  const names = new Set(config.tasks.map((task) => task.name));
  const worktrees = given ?? new RunWorktrees(newRunId(), config.keep_worktrees);

  const settle = (task: ResolvedTask, result: TaskResult, started: boolean, worktree?: WorktreeOutcome) => {
    results.set(task.name, result);
    if (worktree !== undefined) outcomes.set(task.name, worktree);
    events.push({ type: "task_settled", task: { name: task.name, agent: task.agent }, result, started, ...(worktree && { worktree }) });
  };

  /** What {{results.<task>…}} reads: a task that changed nothing in its worktree has no branch, and stands for the commit it started from. */
  const fieldsOf = (name: string): ResultFields | undefined => {
    const result = results.get(name);
    if (result === undefined) return undefined;
    const worktree = outcomes.get(name);
    return {
      text: result.text,
      structured: result.structuredOutput,
      ...(worktree !== undefined && { branch: worktree.branch ?? worktree.base, commit: worktree.commit ?? worktree.base }),
    };
  };

  const advance = () => {
    let changed = true;
    // Skipping one task may settle the tasks that wait on it: repeat until nothing moves.
    while (changed) {
      changed = false;
      for (const task of waiting) {
        if (signal.aborted) {
          settle(task, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "interrupted before it started" }), false);
        } else {
          const unfinished = task.depends_on.filter((name) => !results.has(name));
          if (unfinished.length > 0) continue;
          const failed = task.depends_on.find((name) => results.get(name)?.status !== "succeeded");
          if (failed !== undefined) {
            const message = `dependency "${failed}" ${results.get(failed)?.status}`;
            settle(task, unrunResult(task, "skipped", { code: DEPENDENCY_FAILED, message }), false);
          } else {
            start(task);
          }
        }
        waiting.delete(task);
        changed = true;
      }
    }
    if (results.size === config.tasks.length) {
      // Given worktrees are the caller's to dispose of.
      if (given === undefined) void worktrees.dispose();
      events.end();
    }
  };

  const start = (task: ResolvedTask) => {
    const spec = taskSpecFor(task, fillResults(task.prompt, names, fieldsOf), signal);
    let open: OpenWorktree | undefined;
    const { worktree } = task;
    if (worktree !== undefined) {
      spec.prepareWorker = async () => {
        const base = fillResults(worktree.base ?? worktree.start, names, fieldsOf);
        open = await worktrees.open({ task: task.name, repo: worktree.repo, cwd: task.cwd ?? config.defaults.cwd, base });
        return { cwd: open.cwd };
      };
    }
    orchestrator.run(spec).then(
      async (ran) => {
        // A worker that died from the same Ctrl-C (the terminal signals the whole process group) was interrupted, not failed.
        let result: TaskResult = signal.aborted && ran.status === "failed" ? { ...ran, status: "cancelled" } : ran;
        let outcome: WorktreeOutcome | undefined;
        if (open !== undefined) {
          try {
            outcome = await worktrees.close(open, result.status);
          } catch (error) {
            const { code, message } = error as { code: string; message: string };
            result = { ...result, status: "failed", error: { code, message } };
          }
        }
        settle(task, result, true, outcome);
        advance();
      },
      // The orchestrator refuses a task it cannot run (e.g. a prompt left empty by an empty dependency result).
      (error: unknown) => {
        const { code = "INVALID_TASK", message = String(error) } = error as { code?: string; message?: string };
        settle(task, unrunResult(task, "failed", { code, message }), false);
        advance();
      },
    );
  };

  signal.addEventListener("abort", advance, { once: true });
  advance();
  return events;
}
