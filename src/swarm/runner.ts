import { randomUUID } from "node:crypto";
import type { Orchestrator, TaskResult, TaskStatus } from "../orchestrator/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask, taskSpecFor } from "./config/index.ts";

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
}

/** What a swarm run reports beyond the orchestrator's events. */
export type SwarmEvent = TaskSettledEvent;

export interface RunSwarmOptions {
  config: ResolvedSwarmConfig;
  orchestrator: Orchestrator;
  /** Aborted by the first Ctrl-C: nothing new starts, running tasks are stopped. */
  signal: AbortSignal;
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
 * and says which one. Starts at once; the stream has one task_settled event
 * per task, in the order they settle, and ends when every task has one.
 */
export function runSwarm({ config, orchestrator, signal }: RunSwarmOptions): AsyncIterable<SwarmEvent> {
  const events = new AsyncQueue<SwarmEvent>();
  const results = new Map<string, TaskResult>();
  const waiting = new Set(config.tasks);

  const settle = (task: ResolvedTask, result: TaskResult, started: boolean) => {
    results.set(task.name, result);
    events.push({ type: "task_settled", task: { name: task.name, agent: task.agent }, result, started });
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
    if (results.size === config.tasks.length) events.end();
  };

  const start = (task: ResolvedTask) => {
    const prompt = fillResults(task.prompt, (name) => results.get(name)?.text);
    orchestrator.run(taskSpecFor(task, prompt, signal)).then(
      (result) => {
        // A worker that died from the same Ctrl-C (the terminal signals the whole process group) was interrupted, not failed.
        const interrupted = signal.aborted && result.status === "failed";
        settle(task, interrupted ? { ...result, status: "cancelled" } : result, true);
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
