import { emptyUsage } from "./accounting.ts";
import type { TaskResult, TaskStatus } from "./types.ts";

/** The result of a task that has no turn to report: skipped, cancelled before it ran, or lost with its host. */
export function resultWithoutTurn(
  task: Pick<TaskResult, "id" | "name" | "agent">,
  status: TaskStatus,
  error: { code: string; message: string },
  { attempts = 0, durationMs = 0 }: { attempts?: number; durationMs?: number } = {},
): TaskResult {
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
    durationMs,
    attempts,
    sessionId: undefined,
    error,
  };
}
