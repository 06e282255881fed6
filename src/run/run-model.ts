// The run's read-model: its rows and totals, folded from the orchestrator's and the swarm's events.
import {
  type BudgetUse,
  budgetLabel,
  type OrchestratorEvent,
  type PlanWindowNews,
  type RateLimitState,
  sessionIdOf,
  type TaskInfo,
  type TaskResult,
  type Usage,
} from "../orchestrator/index.ts";
import type { TaskSettledEvent, WorktreeOutcome } from "../swarm/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { oneLine } from "../util/one-line.ts";
import { activityOf, backgroundLine, resultLine, worktreeLine } from "./activity.ts";
import type { WorkflowRunEvent } from "./plan.ts";
import { blankRow, type Row, type RowKind, type RowStatus, type RunRow, taskKey } from "./run-row.ts";
import type { RunEvent } from "./swarm-run.ts";

/** A workflow script's run beside its rows: its name, its logs as they come, and how it ended. */
export interface WorkflowState {
  name: string;
  description: string;
  logs: string[];
  /** Set once the script has ended: its return value, or why it did not return. */
  outcome: { ok: boolean; result?: unknown; error?: { code: string; message: string } } | undefined;
}

/** What a reader hears after each event: the event, and the row it changed (none for run-wide events). */
export interface RunChange {
  event: RunEvent;
  row: RunRow | undefined;
  at: number;
}

export interface RunModelOptions {
  title: string;
  /** "swarm": a run of config tasks; "sessions": the child sessions of `cadre mcp`. */
  mode: "swarm" | "sessions";
  /** The config's tasks, in order: shown as waiting until the orchestrator has them. */
  tasks?: readonly { name: string; template?: string; agent?: string | undefined; depends_on?: readonly string[] }[];
  startedAt: number;
  /** The budget the run applies. */
  budgetUsd?: number | undefined;
  /** The agents' budgets the run applies (agent name → dollars). */
  agentBudgets?: Readonly<Record<string, number | undefined>>;
  /** A rehearsal: the scripted model's costs are made up. */
  costSimulated?: boolean;
}

const TASK_ENDS = new Set<RowStatus>(["succeeded", "failed", "cancelled", "skipped"]);

/** The group a task's row folds into: the task as written, for a for_each copy or a loop's round (named otherwise). */
function groupOf(task: { name: string; template?: string }): string | null {
  return task.template !== undefined && task.template !== task.name ? task.template : null;
}

/**
 * The one read-model of a run, built from its events only: a row per task or
 * session (config tasks first, in order; spawned workers after their
 * parent), with status, activity, cost and tokens, session, error and
 * timing, and the run's totals, rate limit and budget. The terminal views and
 * the dashboard both read it; listeners hear of every change.
 */
export class RunModel {
  readonly title: string;
  readonly mode: "swarm" | "sessions";
  readonly startedAt: number;
  readonly budgetUsd: number | undefined;
  readonly costSimulated: boolean;
  /** The run's cost as the orchestrator counts it (peers and supervisors included once they report). */
  totalUsd = 0;
  /** The run's token usage as of the latest result. */
  totalUsage: Usage | undefined;
  rateLimit: RateLimitState | undefined;
  /** The plan window that holds new starts now, if one does. */
  planWindow: PlanWindowNews | undefined;
  /** The run's own budget, once reached. */
  budget: { spentUsd: number; budgetUsd: number } | undefined;
  /** Each agent's and task's budget by label ("agent reviewer"): its limit, its use as last reported, and whether it was reached. */
  readonly budgets = new Map<string, BudgetUse & { reached: boolean }>();
  /** What peer and supervisor turns cost, by agent (they have no row). */
  readonly #agentTurnUsd = new Map<string, number>();
  interrupted = false;
  finishedAt: number | undefined;
  /** A workflow script's run: its logs and how it ended (undefined for a swarm's or the sessions of `cadre mcp`). */
  workflow: WorkflowState | undefined;
  readonly #rows: Row[] = [];
  readonly #byTask = new Map<string, Row>();
  readonly #byKey = new Map<string, Row>();
  /** Message ids seen per running row: the CLI splits one model reply into several messages of the same id. */
  readonly #replies = new Map<Row, Set<string>>();
  /** Rows of swarm tasks queued before the run named them (a for_each's copies): tasks_added gives them their group. */
  readonly #startedUnnamed = new Map<string, Row>();
  readonly #changes = new EventHub<RunChange>();
  #seq = 0;

  constructor(options: RunModelOptions) {
    this.title = options.title;
    this.mode = options.mode;
    this.startedAt = options.startedAt;
    this.budgetUsd = options.budgetUsd;
    for (const [name, limitUsd] of Object.entries(options.agentBudgets ?? {}))
      if (limitUsd !== undefined) this.#budgetUse({ scope: { kind: "agent", name }, limitUsd, spentUsd: 0 });
    this.costSimulated = options.costSimulated ?? false;
    for (const task of options.tasks ?? []) {
      const row = this.#add(blankRow(taskKey(task.name), task.name, task.agent, "task"));
      row.waitsFor = [...(task.depends_on ?? [])];
      row.group = groupOf(task);
    }
  }

  /** The number of the latest change (see RunRow.version). */
  get seq(): number {
    return this.#seq;
  }

  get rows(): readonly RunRow[] {
    return this.#rows;
  }

  row(key: string): RunRow | undefined {
    return this.#byKey.get(key);
  }

  /** The row of the orchestrator's task `id`, once it has been seen. */
  rowOfTask(id: string): RunRow | undefined {
    return this.#byTask.get(id);
  }

  /** Rows per status, of the run's own tasks (not the workers they spawned). */
  counts(): Record<RowStatus, number> {
    const counts = Object.fromEntries([...TASK_ENDS, "waiting", "queued", "starting", "running", "retrying"].map((s) => [s, 0])) as Record<
      RowStatus,
      number
    >;
    for (const row of this.#rows) if (row.parent === null) counts[row.status] = (counts[row.status] ?? 0) + 1;
    return counts;
  }

  /** What each agent spent so far (its tasks, children and sessions; "" for work without an agent), most first. */
  spendByAgent(): { agent: string; costUsd: number }[] {
    const spend = new Map(this.#agentTurnUsd);
    for (const row of this.#rows) if (row.costUsd > 0) spend.set(row.agent ?? "", (spend.get(row.agent ?? "") ?? 0) + row.costUsd);
    return [...spend].map(([agent, costUsd]) => ({ agent, costUsd })).sort((a, b) => b.costUsd - a.costUsd);
  }

  onChange(listener: (change: RunChange) => void): () => void {
    return this.#changes.on(listener);
  }

  apply(event: RunEvent, now: number): void {
    const row = this.#apply(event, now);
    this.#seq++;
    if (row) row.version = this.#seq;
    this.#changes.emit({ event, row, at: now });
  }

  #apply(event: RunEvent, now: number): Row | undefined {
    switch (event.type) {
      case "task_settled":
        return this.#settle(event, now);
      case "workflow_started":
      case "workflow_phase":
      case "workflow_log":
      case "agent_started":
      case "agent_ended":
      case "workflow_ended":
        return this.#workflowEvent(event);
      case "task_ready":
      case "loop_ended":
      case "access_waiting":
      case "access_refused":
      case "record_unwritten":
      case "record_written_again":
        return undefined;
      case "tasks_added":
        // A for_each's copies, a loop's round or a posted task, as they are made: rows of their own, changed as of this event.
        for (const task of event.tasks) {
          if (this.#byKey.has(taskKey(task.name))) continue;
          // A copy may have been queued (and have its row) before the event that names it arrives.
          const row = this.#startedUnnamed.get(task.name) ?? this.#add(blankRow(taskKey(task.name), task.name, task.agent, "task"));
          this.#startedUnnamed.delete(task.name);
          row.waitsFor = [...task.depends_on];
          row.group = groupOf(task);
          if (task.posted !== undefined) {
            // Who posted it is a part of the row the views show beside its name; its activity says what it is doing.
            row.postedBy = task.posted.by;
            row.activity = "posted";
          }
          row.version = this.#seq + 1;
        }
        return undefined;
      case "task_rerun": {
        const row = this.#byKey.get(taskKey(event.task.name));
        if (row) row.activity = oneLine(`runs again: ${event.reason}`);
        return row;
      }
      case "agent_turn":
        this.#agentTurnUsd.set(event.agent, (this.#agentTurnUsd.get(event.agent) ?? 0) + event.turn.costUsd);
        return undefined;
      case "rate_limit":
        this.rateLimit = event.state;
        return undefined;
      case "plan_window": {
        const { type: _type, ...news } = event;
        this.planWindow = news.state === "waiting" ? news : undefined;
        return undefined;
      }
      case "budget_exceeded":
        if (event.scope === undefined || event.scope.kind === "run") this.budget = { spentUsd: event.spentUsd, budgetUsd: event.budgetUsd };
        else this.#budgetUse({ scope: event.scope, limitUsd: event.budgetUsd, spentUsd: event.spentUsd }, true);
        return undefined;
      default:
        return this.#task(event, now);
    }
  }

  /** A script's own event: its logs and end for the run, its calls' phases for their rows. */
  #workflowEvent(event: WorkflowRunEvent): Row | undefined {
    switch (event.type) {
      case "workflow_started":
        this.workflow = { name: event.meta.name, description: event.meta.description, logs: [], outcome: undefined };
        return undefined;
      case "workflow_log":
        this.workflow?.logs.push(event.message);
        return undefined;
      case "workflow_ended":
        if (this.workflow) this.workflow.outcome = event.outcome;
        return undefined;
      case "agent_started": {
        const row = this.#byKey.get(taskKey(event.name));
        if (row) row.callPhase = event.call.phase ?? null;
        return row;
      }
      default:
        return undefined;
    }
  }

  #budgetUse(use: BudgetUse, reached = false): void {
    const label = budgetLabel(use.scope);
    const known = this.budgets.get(label);
    this.budgets.set(label, { ...use, spentUsd: Math.max(use.spentUsd, known?.spentUsd ?? 0), reached: reached || (known?.reached ?? false) });
  }

  #task(
    event: Exclude<
      OrchestratorEvent,
      { type: "rate_limit" | "plan_window" | "budget_exceeded" | "access_waiting" | "access_refused" | "agent_turn" }
    >,
    now: number,
  ): Row {
    const row = this.#row(event.task, now);
    switch (event.type) {
      case "cost":
        this.totalUsd = Math.max(this.totalUsd, event.totalUsd);
        this.totalUsage = event.totalUsage;
        row.costUsd = event.taskUsd;
        for (const use of event.budgets ?? []) this.#budgetUse(use);
        break;
      case "task_queued":
        this.#phase(row, "queued", now);
        break;
      case "worker_state":
        // A task's attempt took a slot: its worker is starting.
        if (event.state === "starting" && row.kind !== "session") {
          this.#markStarted(row, now);
          this.#phase(row, "starting", now);
        }
        break;
      case "task_started":
        row.attempts = event.attempt;
        this.#markStarted(row, event.startedAt);
        this.#phase(row, "running", now);
        row.activity = event.attempt > 1 ? `attempt ${event.attempt}` : "starting";
        break;
      case "task_retry":
        this.#phase(row, "retrying", now);
        row.activity = oneLine(`retry in ${(event.delayMs / 1000).toFixed(1)}s: ${event.error.message}`);
        break;
      case "task_message": {
        const { message } = event;
        if (message.type === "assistant" && message.message.id !== undefined) {
          const seen = this.#replies.get(row) ?? new Set<string>();
          this.#replies.set(row, seen.add(message.message.id));
          row.turns = Math.max(row.turns, seen.size);
        }
        row.sessionId = sessionIdOf(message) ?? row.sessionId;
        row.activity = activityOf(message) ?? row.activity;
        break;
      }
      case "task_finished":
        this.#finish(row, event.result, now);
        break;
      case "permission_request":
        row.pending.push({ requestId: event.requestId, request: event.request, since: now });
        row.activity = oneLine(`waiting for permission: ${event.request.toolName}`);
        break;
      case "permission_settled":
        row.pending = row.pending.filter((p) => p.requestId !== event.requestId);
        break;
      case "hook_failed":
        row.activity = oneLine(`${event.event} hook failed: ${event.error.message}`);
        break;
      case "background_task": {
        const at = row.background.findIndex((task) => task.id === event.background.id);
        row.background = at < 0 ? [...row.background, event.background] : row.background.with(at, event.background);
        row.activity = backgroundLine(event.background);
        break;
      }
      case "session_status":
        if (event.status === "running") this.#markStarted(row, now);
        this.#phase(row, event.status, now);
        if (event.status === "closed") row.finishedAt = now;
        break;
      default:
        break;
    }
    return row;
  }

  /** The row of a task: a config task by name on first sight, a spawned worker after its parent, else a new row. */
  #row(task: TaskInfo, now: number): Row {
    const known = this.#byTask.get(task.id);
    if (known) return known;
    const parent = task.parentId === undefined ? undefined : this.#byTask.get(task.parentId);
    let row = parent ? undefined : this.#byKey.get(taskKey(task.name));
    if (row === undefined || row.taskId !== undefined) {
      const kind: RowKind = parent ? "child" : this.mode === "sessions" ? "session" : "task";
      row = this.#add(blankRow(`id:${task.id}`, task.name, task.agent, kind, parent?.key ?? null), parent && this.#afterDescendants(parent));
      row.status = "queued";
      if (!parent && this.mode === "swarm") this.#startedUnnamed.set(task.name, row);
    }
    row.taskId = task.id;
    row.queuedAt ??= now;
    this.#byTask.set(task.id, row);
    return row;
  }

  #add(row: Row, at?: number): Row {
    this.#rows.splice(at ?? this.#rows.length, 0, row);
    this.#byKey.set(row.key, row);
    return row;
  }

  /** Where a new child of `parent` goes: after the parent and everything below it. */
  #afterDescendants(parent: Row): number {
    const below = new Set([parent.key]);
    let at = this.#rows.indexOf(parent) + 1;
    while (at < this.#rows.length && below.has(this.#rows[at]!.parent ?? "")) below.add(this.#rows[at++]!.key);
    return at;
  }

  /** The first time the row takes a slot ends its time in the queue. */
  #markStarted(row: Row, at: number): void {
    row.startedAt ??= at;
    row.queuedMs ??= row.queuedAt === null ? null : at - row.queuedAt;
  }

  #phase(row: Row, status: RowStatus, now: number): void {
    // A task's end is final; a session that failed starts again with its next turn, and ends only when closed.
    if (row.kind === "session" ? row.status === "closed" : TASK_ENDS.has(row.status)) return;
    row.status = status;
    if (row.phases.at(-1)?.status !== status) row.phases.push({ status, at: now });
  }

  #finish(row: Row, result: TaskResult, now: number, worktree?: WorktreeOutcome): void {
    row.finishedAt ??= now;
    // The orchestrator's own measure of when the first attempt took its slot.
    if (result.startedAt !== undefined) {
      row.startedAt = result.startedAt;
      row.queuedMs = result.queuedMs;
      const started = row.phases.find((phase) => phase.status === "starting" || phase.status === "running");
      if (started) started.at = result.startedAt;
    }
    row.durationMs = result.durationMs;
    row.turns = Math.max(row.turns, result.numTurns);
    row.costUsd = result.costUsd;
    row.usage = result.usage;
    row.sessionId = result.sessionId ?? row.sessionId;
    row.attempts = Math.max(row.attempts, result.attempts);
    row.error = result.error?.message ?? null;
    row.background = result.backgroundTasks ?? row.background;
    row.activity = worktree === undefined ? resultLine(result) : oneLine(`${worktreeLine(worktree)}; ${resultLine(result)}`);
    this.#phase(row, result.status, now);
    // A finished task keeps its figures, not its history (a session goes on to its next turn).
    if (row.kind !== "session") this.#replies.delete(row);
  }

  /** The swarm's word on a config task is final (a task stopped by Ctrl-C is cancelled even if its worker failed). */
  #settle(event: TaskSettledEvent, now: number): Row | undefined {
    const row = this.#byKey.get(taskKey(event.task.name));
    if (!row) return undefined;
    if (!event.started) row.finishedAt = now;
    this.#finish(row, event.result, now, event.worktree);
    if (event.carriedOver) row.activity = oneLine(`kept from the run it resumes: ${resultLine(event.result)}`);
    row.branch = event.worktree?.branch ?? row.branch;
    row.status = event.result.status;
    if (row.phases.at(-1)?.status !== row.status) row.phases.push({ status: row.status, at: now });
    return row;
  }
}
