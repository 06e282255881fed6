import { randomUUID } from "node:crypto";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask } from "../../orchestrator/config/index.ts";
import type { OrchestratorEvent, TaskResult, TaskRunner, TaskStatus } from "../../orchestrator/index.ts";
import { taskSpecFor } from "../../orchestrator/config/index.ts";

/** Codes of the results the runner decides itself, without a worker. */
export const DEPENDENCY_FAILED = "DEPENDENCY_FAILED";
export const INTERRUPTED = "INTERRUPTED";

export interface RunSwarmOptions {
  config: ResolvedSwarmConfig;
  /** Where a ready task starts: the orchestrator here, or the coordinator of a distributed run. */
  orchestrator: TaskRunner;
  /** Aborted by the first Ctrl-C: nothing new starts, running tasks are stopped. */
  interrupt: AbortSignal;
  /** Receives the task_finished events of tasks that never reach the orchestrator (skipped, interrupted while waiting). */
  emit: (event: OrchestratorEvent) => void;
  /** Filled in as tasks finish (task name → result), so a caller can read it mid-run. */
  results: Map<string, TaskResult>;
}

/** A result for a task that never ran. */
export function unrunResult(task: ResolvedTask, status: TaskStatus, error: { code: string; message: string }): TaskResult {
  return {
    id: randomUUID().slice(0, 8),
    name: task.name,
    agent: task.agent,
    status,
    text: "",
    structuredOutput: undefined,
    costUsd: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    numTurns: 0,
    durationMs: 0,
    attempts: 0,
    sessionId: undefined,
    error,
  };
}

/**
 * Runs a swarm's tasks in dependency order: a task is handed to the
 * orchestrator (which applies the concurrency limits, retries and budget)
 * once every task it depends on has succeeded, with {{results.x}} filled in
 * from their final texts. A task whose dependency did not succeed is skipped
 * and says which one. Resolves with `results` once every task has one.
 */
export function runSwarm({ config, orchestrator, interrupt, emit, results }: RunSwarmOptions): Promise<Map<string, TaskResult>> {
  const waiting = new Set(config.tasks);

  return new Promise((resolve) => {
    const settle = (task: ResolvedTask, result: TaskResult, synthetic: boolean) => {
      results.set(task.name, result);
      if (synthetic) emit({ type: "task_finished", task: { id: result.id, name: task.name, agent: task.agent, parentId: undefined }, result });
    };

    const advance = () => {
      let changed = true;
      // Skipping one task may settle the tasks that wait on it: repeat until nothing moves.
      while (changed) {
        changed = false;
        for (const task of waiting) {
          if (interrupt.aborted) {
            settle(task, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "interrupted before it started" }), true);
          } else {
            const unfinished = task.depends_on.filter((name) => !results.has(name));
            if (unfinished.length > 0) continue;
            const failed = task.depends_on.find((name) => results.get(name)?.status !== "succeeded");
            if (failed !== undefined) {
              const message = `dependency "${failed}" ${results.get(failed)?.status}`;
              settle(task, unrunResult(task, "skipped", { code: DEPENDENCY_FAILED, message }), true);
            } else {
              start(task);
            }
          }
          waiting.delete(task);
          changed = true;
        }
      }
      if (results.size === config.tasks.length) resolve(results);
    };

    const start = (task: ResolvedTask) => {
      const prompt = fillResults(task.prompt, (name) => results.get(name)?.text);
      orchestrator.run(taskSpecFor(task, prompt, interrupt)).then(
        (result) => {
          // A worker that died from the same Ctrl-C (the terminal signals the whole process group) was interrupted, not failed.
          const interrupted = interrupt.aborted && result.status === "failed";
          settle(task, interrupted ? { ...result, status: "cancelled" } : result, false);
          advance();
        },
        // The orchestrator refuses a task it cannot run (e.g. a prompt left empty by an empty dependency result).
        (error: unknown) => {
          const { code = "INVALID_TASK", message = String(error) } = error as { code?: string; message?: string };
          settle(task, unrunResult(task, "failed", { code, message }), true);
          advance();
        },
      );
    };

    interrupt.addEventListener("abort", advance, { once: true });
    advance();
  });
}
