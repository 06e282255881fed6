// A task's record as the orchestrator makes it, for tests of its parts that read one (no orchestrator, no process).
import { emptyUsage } from "../../src/orchestrator/accounting.ts";
import type { TaskRecord } from "../../src/orchestrator/task-record.ts";

/** A task not started yet, of no agent, under no budget; `extra` sets any field. */
export function taskRecord(extra: Partial<TaskRecord> = {}): TaskRecord {
  return {
    info: { id: "t1", name: "t1", agent: undefined, parentId: undefined },
    overrides: {},
    agent: undefined,
    depth: 0,
    parent: undefined,
    budgets: [],
    costUsd: 0,
    usage: emptyUsage(),
    attempts: 0,
    sessionId: undefined,
    queuedAt: 0,
    startedAt: undefined,
    prepared: false,
    attemptMessages: [],
    backgroundTasks: new Map(),
    ...extra,
  };
}
