import type { RateLimitState, TaskResult, TaskStatus, Usage } from "../../orchestrator/index.ts";
import type { RunEvent } from "../../run/index.ts";
import type { WorktreeOutcome } from "../../swarm/worktree.ts";
import { oneLine } from "../../util/one-line.ts";
import { activityOf, resultLine, worktreeLine } from "./activity.ts";

/** Where a task is: before it is handed to the orchestrator (waiting), in its queue, running, or done. */
export type RowStatus = "waiting" | "queued" | "running" | "retrying" | TaskStatus;

export interface TaskRow {
  name: string;
  agent: string | undefined;
  /** Set on rows of workers spawned by another task's worker. */
  parentName?: string;
  status: RowStatus;
  /** The tasks it depends on (config tasks). */
  waitsFor: string[];
  attempt: number;
  /** When the orchestrator got it, and when it took its first slot (the orchestrator's clock once it says). */
  queuedAt?: number;
  startedAt?: number;
  finishedAt?: number;
  /** The orchestrator's measures once finished: the wait for a slot, and the run time from the start (retries included). */
  queuedMs?: number;
  durationMs?: number;
  turns: number;
  costUsd: number;
  activity: string;
}

/**
 * What the views show, built from the run's events only: one row per
 * task in config order (spawned workers after their parent), totals, rate
 * limiting and the budget. Views render it; they never see the orchestrator.
 */
export class RunState {
  readonly rows: TaskRow[];
  /** Cost of the run as the orchestrator counts it (peer and supervisor sessions included once they report). */
  totalUsd = 0;
  /** The run's token usage as of the latest result (for the share read from the prompt cache). */
  totalUsage: Usage | undefined;
  rateLimit: RateLimitState | undefined;
  budget: { spentUsd: number; budgetUsd: number } | undefined;
  interrupted = false;
  finishedAt: number | undefined;
  private readonly byId = new Map<string, TaskRow>();
  /** Message ids seen per row: the CLI splits one model reply into several messages of the same id. */
  private readonly replies = new Map<TaskRow, Set<string>>();

  constructor(
    readonly swarm: string,
    tasks: readonly { name: string; agent?: string | undefined; depends_on?: string[] }[],
    readonly startedAt: number,
    /** Applied to this run; a rehearsal ignores budget_usd unless told otherwise. */
    readonly budgetUsd?: number,
    /** A rehearsal: the scripted model's costs are made up, and shown as such. */
    readonly costSimulated = false,
  ) {
    this.rows = tasks.map((task) => ({
      name: task.name,
      agent: task.agent,
      status: "waiting",
      waitsFor: task.depends_on ?? [],
      attempt: 0,
      turns: 0,
      costUsd: 0,
      activity: "",
    }));
  }

  counts(): Record<RowStatus, number> {
    const counts: Record<RowStatus, number> = { waiting: 0, queued: 0, running: 0, retrying: 0, succeeded: 0, failed: 0, cancelled: 0, skipped: 0 };
    for (const row of this.rows) if (row.parentName === undefined) counts[row.status]++;
    return counts;
  }

  apply(event: RunEvent, now: number): void {
    switch (event.type) {
      case "task_settled": {
        // The swarm's word is final: a task stopped by Ctrl-C counts as cancelled even if its worker failed.
        const row = this.rows.find((r) => r.name === event.task.name && r.parentName === undefined);
        if (row) finish(row, event.result, now, event.worktree);
        return;
      }
      case "rate_limit":
        this.rateLimit = event.state;
        return;
      case "budget_exceeded":
        this.budget = { spentUsd: event.spentUsd, budgetUsd: event.budgetUsd };
        return;
      case "cost":
        this.totalUsd = Math.max(this.totalUsd, event.totalUsd);
        this.totalUsage = event.totalUsage;
        this.row(event.task).costUsd = event.taskUsd;
        return;
      case "task_rerun":
      case "task_ready":
      case "agent_turn":
        return;
      default:
        break;
    }
    const row = this.row(event.task);
    switch (event.type) {
      case "task_queued":
        row.status = "queued";
        row.queuedAt ??= now;
        break;
      case "task_started":
        row.status = "running";
        row.attempt = event.attempt;
        row.startedAt ??= event.startedAt;
        row.activity = event.attempt > 1 ? `attempt ${event.attempt}` : "starting";
        break;
      case "task_retry":
        row.status = "retrying";
        row.activity = oneLine(`retry in ${(event.delayMs / 1000).toFixed(1)}s: ${event.error.message}`);
        break;
      case "task_message": {
        const { message } = event;
        if (message.type === "assistant" && message.message.id !== undefined) {
          const seen = this.replies.get(row) ?? new Set<string>();
          seen.add(message.message.id);
          this.replies.set(row, seen);
          row.turns = seen.size;
        }
        row.activity = activityOf(message) ?? row.activity;
        break;
      }
      case "task_finished":
        finish(row, event.result, now);
        break;
      case "permission_request":
        row.activity = oneLine(`waiting for permission: ${event.request.toolName}`);
        break;
      case "hook_failed":
        row.activity = oneLine(`${event.event} hook failed: ${event.error.message}`);
        break;
      default:
        break;
    }
  }

  /** The row of a task: a config task by name on first sight, a spawned worker as a new row after its parent. */
  private row(task: { id: string; name: string; agent: string | undefined; parentId: string | undefined }): TaskRow {
    const known = this.byId.get(task.id);
    if (known) return known;
    const parent = task.parentId === undefined ? undefined : this.byId.get(task.parentId);
    let row = parent ? undefined : this.rows.find((r) => r.name === task.name && r.parentName === undefined && !this.isBound(r));
    if (!row) {
      row = { name: task.name, agent: task.agent, status: "queued", waitsFor: [], attempt: 0, turns: 0, costUsd: 0, activity: "" };
      if (parent) row.parentName = parent.name;
      let at = parent ? this.rows.indexOf(parent) : this.rows.length - 1;
      while (parent && this.rows[at + 1]?.parentName === parent.name) at++;
      this.rows.splice(at + 1, 0, row);
    }
    this.byId.set(task.id, row);
    return row;
  }

  private isBound(row: TaskRow): boolean {
    for (const bound of this.byId.values()) if (bound === row) return true;
    return false;
  }
}

function finish(row: TaskRow, result: TaskResult, now: number, worktree?: WorktreeOutcome): void {
  row.status = result.status;
  row.finishedAt ??= now;
  if (result.startedAt !== undefined) row.startedAt = result.startedAt;
  if (row.queuedAt !== undefined) row.queuedMs = result.queuedMs;
  row.durationMs = result.durationMs;
  row.turns = Math.max(row.turns, result.numTurns);
  row.costUsd = result.costUsd;
  row.activity = worktree === undefined ? resultLine(result) : oneLine(`${worktreeLine(worktree)}; ${resultLine(result)}`);
}
