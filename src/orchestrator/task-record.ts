// The running record of one task, and the TaskResult made from it when it ends.
import { AbortError } from "../errors.ts";
import type { CliMessage } from "../protocol/index.ts";
import type { BackgroundTask, TurnResult, WorkerOptions } from "../worker/index.ts";
import type { Budget } from "./budget.ts";
import { BudgetExceededError, OrchestratorClosedError, TaskInterruptedError, TaskStoppedError } from "./errors.ts";
import { errorSummary } from "./failure.ts";
import type { AgentSpec, TaskInfo, TaskResult, TaskStatus, Usage } from "./types.ts";

/** The running record of one task. */
export interface TaskRecord {
  info: TaskInfo;
  /** Worker settings of this task (or session) on top of its agent's and the defaults. */
  overrides: Partial<WorkerOptions>;
  agent: AgentSpec | undefined;
  depth: number;
  parent: TaskRecord | undefined;
  /** The budgets its cost counts against and whose reach stops it: the run's, its agent's, its own (and its parent's). */
  budgets: Budget[];
  costUsd: number;
  usage: Usage;
  attempts: number;
  /** The session of the latest attempt, from its messages: kept when the task fails. */
  sessionId: string | undefined;
  /** When the task was handed to the orchestrator, and when its first attempt took a slot (epoch ms). */
  queuedAt: number;
  startedAt: number | undefined;
  /** Whether the task's prepareWorker has run (it runs once, whatever the attempts). */
  prepared: boolean;
  /** Messages of the current attempt, to judge whether a retry is safe. */
  attemptMessages: CliMessage[];
  /** Its sessions' background tasks by id, as they were last reported. */
  backgroundTasks: Map<string, BackgroundTask>;
  /** Its last attempt's worker being given back (closed, or reset for the next task): its slot is held until it is done. */
  givingBack?: Promise<void>;
}

/** The result of a task as its record, its last turn (if any) and its error (if any) tell it. */
export function taskResult(record: TaskRecord, turn: TurnResult | undefined, error: unknown, finishedAt: number): TaskResult {
  const { queuedAt, startedAt } = record;
  let status: TaskStatus = "succeeded";
  if (error !== undefined) {
    if (error instanceof BudgetExceededError) status = startedAt !== undefined ? "cancelled" : "skipped";
    else if (isCancellation(error)) status = "cancelled";
    else status = "failed";
  }
  return {
    id: record.info.id,
    name: record.info.name,
    agent: record.info.agent,
    status,
    text: turn?.text ?? "",
    structuredOutput: turn?.structuredOutput,
    costUsd: record.costUsd,
    usage: { ...record.usage },
    numTurns: turn?.numTurns ?? 0,
    queuedMs: (startedAt ?? finishedAt) - queuedAt,
    startedAt,
    finishedAt,
    durationMs: startedAt === undefined ? 0 : finishedAt - startedAt,
    attempts: record.attempts,
    // A task stopped mid-turn keeps the session its worker had begun, so that it can be resumed and read.
    sessionId: turn?.sessionId ?? record.sessionId,
    error: error === undefined ? undefined : errorSummary(error),
    backgroundTasks: record.backgroundTasks.size === 0 ? undefined : endedBackgroundTasks(record, error),
  };
}

/** A task that ended while its background work ran stopped that work (the process ends with it): recorded as stopped. */
function endedBackgroundTasks(record: TaskRecord, error: unknown): BackgroundTask[] {
  return [...record.backgroundTasks.values()].map((task) =>
    task.status === "running"
      ? { ...task, status: "stopped", error: task.error ?? (error === undefined ? undefined : errorSummary(error).message) }
      : task,
  );
}

function isCancellation(error: unknown): boolean {
  return (
    error instanceof AbortError ||
    error instanceof OrchestratorClosedError ||
    error instanceof TaskInterruptedError ||
    error instanceof TaskStoppedError ||
    error instanceof DOMException
  );
}
