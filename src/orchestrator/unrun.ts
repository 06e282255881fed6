// The result of a task that has no turn to report: skipped, cancelled before it ran, or lost with its host.
import { emptyUsage } from "./accounting.ts";
import type { TaskResult, TaskStatus } from "./types.ts";

/**
 * The result of a task that has no turn to report: skipped, cancelled before
 * it ran, or lost with its host. It settles now; without `startedAt` it never
 * started (its run time is then 0, and its wait `queuedMs`).
 */
export function resultWithoutTurn(
  task: Pick<TaskResult, "id" | "name" | "agent">,
  status: TaskStatus,
  error: { code: string; message: string },
  { attempts = 0, queuedMs = 0, startedAt }: { attempts?: number; queuedMs?: number; startedAt?: number } = {},
): TaskResult {
  const finishedAt = Date.now();
  return {
    id: task.id,
    name: task.name,
    agent: task.agent,
    status,
    text: "",
    structuredOutput: undefined,
    costUsd: 0,
    usage: emptyUsage(),
    numTurns: 0,
    queuedMs,
    startedAt,
    finishedAt,
    durationMs: startedAt === undefined ? 0 : finishedAt - startedAt,
    attempts,
    sessionId: undefined,
    error,
  };
}
