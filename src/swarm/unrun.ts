// The result of a task the swarm settles without running it (interrupted, skipped).
import { randomUUID } from "node:crypto";
import { resultWithoutTurn, type TaskResult, type TaskStatus } from "../orchestrator/index.ts";
import type { ResolvedTask } from "./config/index.ts";

/** Codes of the results the runner decides itself, without a worker. */
export const INTERRUPTED = "INTERRUPTED";

/** A result for a task that never ran. */
export function unrunResult(task: Pick<ResolvedTask, "name" | "agent">, status: TaskStatus, error: { code: string; message: string }): TaskResult {
  return resultWithoutTurn({ id: randomUUID().slice(0, 8), name: task.name, agent: task.agent }, status, error);
}
