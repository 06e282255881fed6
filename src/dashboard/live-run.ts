import { cacheReadShare, type OrchestratorEvent, type RateLimitState, type TaskInfo, type TaskResult, type Usage } from "../orchestrator/index.ts";
import type { SwarmEvent, TaskSettledEvent } from "../swarm/runner.ts";
import { EventHub } from "../util/event-hub.ts";
import { Conversation, describePermission, permissionEntry } from "./conversation.ts";
import { DashboardError } from "./errors.ts";
import {
  blankRow,
  type PendingView,
  type PermissionAnswer,
  type RowKind,
  type RowView,
  type RunFeed,
  type RunSnapshot,
  type TotalsView,
} from "./feed.ts";
import { type LenientSummary, readTranscript, recordRows, recordTotals, recordTranscript, taskKey } from "./record.ts";

/** What a live run is told: the orchestrator's events and, under `cadre run`, the swarm's. */
export type LiveEvent = OrchestratorEvent | SwarmEvent;

export interface LiveRunOptions {
  id: string;
  title: string;
  /** "swarm": a `cadre run` of config tasks; "sessions": the child sessions of `cadre mcp`. */
  mode: "swarm" | "sessions";
  /** The config's tasks, in order: shown as waiting until the orchestrator has them. */
  tasks?: readonly { name: string; agent?: string | undefined; depends_on?: readonly string[] }[];
  startedAt: number;
  budgetUsd?: number;
  /** The costs are a rehearsal's, made up by its scripted model. */
  costSimulated?: boolean;
  /** The orchestrator's scheduler: the limits in force and the slots in use. */
  scheduler?: { readonly rateLimit: RateLimitState; readonly running: number };
  /** Answers a task's or session's permission request (`cadre mcp`); without it the page only shows them. */
  answer?: (taskId: string, requestId: string, answer: PermissionAnswer) => void;
}

/** Statuses in which a row holds a slot. */
const ACTIVE = new Set(["running", "retrying", "awaiting_permission"]);
const TASK_ENDS = new Set(["succeeded", "failed", "cancelled", "skipped"]);

interface Row {
  view: RowView;
  /** The orchestrator's task id, once it has the task. */
  id: string | undefined;
  conversation: Conversation | undefined;
  /** Assistant message ids seen: the CLI splits one model reply into several messages of the same id. */
  replies: Set<string>;
  pending: Map<string, PendingView>;
}

/**
 * The state of a run as it happens, built from its events only: a row per
 * task or session (config tasks first, in order, spawned workers after their
 * parent), each with its conversation, the pending permission requests,
 * costs and the budget. Listeners hear of every change; the page is sent
 * snapshots.
 */
export class LiveRun implements RunFeed {
  readonly id: string;
  readonly #options: LiveRunOptions;
  readonly #rows: Row[] = [];
  readonly #byId = new Map<string, Row>();
  readonly #byKey = new Map<string, Row>();
  readonly #changes = new EventHub<void>();
  #totalUsd = 0;
  #totalUsage: Usage | undefined;
  #budgetExceeded = false;
  #finishedAt: number | null = null;
  #record: { record: LenientSummary; dir: string } | undefined;

  constructor(options: LiveRunOptions) {
    this.id = options.id;
    this.#options = options;
    for (const task of options.tasks ?? []) {
      const row = this.#add(blankRow(taskKey(task.name), task.name, task.agent, "task"));
      row.view.waitsFor = [...(task.depends_on ?? [])];
    }
  }

  onChange(listener: () => void): () => void {
    return this.#changes.on(listener);
  }

  apply(event: LiveEvent, now = Date.now()): void {
    this.#apply(event, now);
    this.#changes.emit();
  }

  /** The run is over: its record (summary.json, in `dir`) has the final figures and the sessions it ran. */
  finish(now: number, record?: { record: LenientSummary; dir: string }): void {
    this.#finishedAt = now;
    this.#record = record;
    for (const row of record ? recordRows(record.record) : []) {
      // A spawned child is a row already: the record names it and its parent as the live run did.
      const own =
        this.#byKey.get(row.key) ?? this.#rows.find((r) => r.view.kind === "child" && r.view.name === row.name && r.view.parent === row.parent);
      const parent = row.parent === null ? undefined : this.#byKey.get(row.parent);
      if (own) Object.assign(own.view, { turns: row.turns, costUsd: row.costUsd, status: row.status });
      else this.#add(row, parent && this.#afterDescendants(parent));
    }
    for (const row of this.#rows) row.conversation?.end();
    this.#changes.emit();
  }

  async conversation(key: string): Promise<Conversation | undefined> {
    const row = this.#byKey.get(key);
    if (row?.conversation) return row.conversation;
    const path = this.#record && recordTranscript(this.#record.record, this.#record.dir, key);
    return path === undefined ? undefined : readTranscript(path);
  }

  answer(key: string, requestId: string, answer: PermissionAnswer): void {
    const row = this.#byKey.get(key);
    const answerer = this.#options.answer;
    if (!answerer) throw new DashboardError("NOT_ANSWERABLE", "this dashboard shows permission requests but cannot answer them");
    if (!row?.id || !row.pending.has(requestId))
      throw new DashboardError("UNKNOWN_REQUEST", `no waiting permission request "${requestId}" on ${key}`);
    answerer(row.id, requestId, answer);
  }

  snapshot(now: number): RunSnapshot {
    const rows = this.#rows.map(({ view, pending }) => ({
      ...view,
      runMs: view.startedAt === null ? view.runMs : (view.finishedAt ?? now) - view.startedAt,
      pending: [...pending.values()],
    }));
    const record = this.#record?.record;
    return {
      id: this.id,
      title: this.#options.title,
      mode: this.#options.mode,
      live: this.#finishedAt === null,
      finished: this.#finishedAt !== null,
      startedAt: this.#options.startedAt,
      finishedAt: this.#finishedAt,
      now,
      rows,
      // At the end, the figures summary.json states.
      totals: record
        ? { ...recordTotals(record), budgetUsd: this.#options.budgetUsd ?? null, budgetExceeded: this.#budgetExceeded }
        : this.#totals(rows),
      rateLimit: this.#finishedAt === null ? (this.#options.scheduler?.rateLimit ?? null) : null,
      running: this.#options.scheduler?.running ?? rows.filter((r) => ACTIVE.has(r.status)).length,
      answerable: this.#options.answer !== undefined,
      costSimulated: record?.cost_simulated ?? this.#options.costSimulated ?? false,
      notice: null,
    };
  }

  #totals(rows: RowView[]): TotalsView {
    const top = rows.filter((r) => r.parent === null && r.kind !== "peer" && r.kind !== "supervisor");
    const byStatus: Record<string, number> = {};
    for (const row of top) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
    return {
      tasks: top.length,
      byStatus,
      turns: top.reduce((sum, r) => sum + r.turns, 0),
      costUsd: this.#totalUsd,
      cacheReadShare: this.#totalUsage ? (cacheReadShare(this.#totalUsage) ?? null) : null,
      budgetUsd: this.#options.budgetUsd ?? null,
      budgetExceeded: this.#budgetExceeded,
    };
  }

  #apply(event: LiveEvent, now: number): void {
    switch (event.type) {
      case "task_settled":
        this.#settle(event, now);
        return;
      case "task_ready":
      case "agent_turn":
        return;
      case "task_rerun": {
        const row = this.#byKey.get(taskKey(event.task.name));
        if (row) row.view.activity = `runs again: ${event.reason}`;
        return;
      }
      case "rate_limit":
        return;
      case "budget_exceeded":
        this.#budgetExceeded = true;
        return;
      case "cost":
        this.#totalUsd = Math.max(this.#totalUsd, event.totalUsd);
        this.#totalUsage = event.totalUsage;
        this.#row(event.task, now).view.costUsd = event.taskUsd;
        return;
      default:
        break;
    }
    const row = this.#row(event.task, now);
    const view = row.view;
    switch (event.type) {
      case "task_queued":
        this.#phase(row, "queued", now);
        break;
      case "worker_state":
        // A task's attempt took a slot: its worker is starting.
        if (event.state === "starting" && view.kind !== "session") {
          this.#markStarted(row, now);
          this.#phase(row, "starting", now);
        }
        break;
      case "task_started":
        view.attempts = event.attempt;
        this.#markStarted(row, event.startedAt);
        if (event.attempt > 1) this.#note(row, `attempt ${event.attempt}`, now);
        this.#phase(row, "running", now);
        break;
      case "task_retry":
        this.#note(row, `retry in ${(event.delayMs / 1000).toFixed(1)} s: ${event.error.message}`, now);
        this.#phase(row, "retrying", now);
        break;
      case "task_message": {
        const { message } = event;
        if (message.type === "assistant" && message.message.id !== undefined) {
          row.replies.add(message.message.id);
          view.turns = Math.max(view.turns, row.replies.size);
        }
        this.#conversation(row).addMessage(message, now);
        break;
      }
      case "task_finished":
        this.#finishRow(row, event.result, now);
        break;
      case "permission_request": {
        const { kind, ask, input, questions } = describePermission(event.request);
        row.pending.set(event.requestId, {
          requestId: event.requestId,
          toolName: event.request.toolName,
          kind,
          ask,
          input,
          ...(questions && { questions }),
          since: now,
        });
        this.#conversation(row).add(permissionEntry(event.requestId, event.request), now);
        break;
      }
      case "permission_settled":
        if (row.pending.delete(event.requestId)) this.#conversation(row).add({ kind: "permission_settled", requestId: event.requestId }, now);
        break;
      case "hook_failed":
        this.#note(row, `${event.event} hook failed: ${event.error.message}`, now);
        break;
      case "session_status":
        if (event.status === "running") this.#markStarted(row, now);
        this.#phase(row, event.status, now);
        if (event.status === "closed") {
          view.finishedAt = now;
          row.conversation?.end();
        }
        break;
      default:
        break;
    }
    view.activity = row.conversation?.latest() || view.activity;
  }

  /** The row of a task: a config task by name on first sight, a spawned worker after its parent, else a new row. */
  #row(task: TaskInfo, now: number): Row {
    const known = this.#byId.get(task.id);
    if (known) return known;
    const parent = task.parentId === undefined ? undefined : this.#byId.get(task.parentId);
    let row = parent ? undefined : this.#byKey.get(taskKey(task.name));
    if (row === undefined || row.id !== undefined) {
      const kind: RowKind = parent ? "child" : this.#options.mode === "sessions" ? "session" : "task";
      const view = blankRow(`id:${task.id}`, task.name, task.agent, kind);
      if (parent) view.parent = parent.view.key;
      row = this.#add(view, parent ? this.#afterDescendants(parent) : undefined);
    }
    row.id = task.id;
    row.view.queuedAt ??= now;
    this.#byId.set(task.id, row);
    return row;
  }

  #add(view: RowView, at?: number): Row {
    const row: Row = { view, id: undefined, conversation: undefined, replies: new Set(), pending: new Map() };
    this.#rows.splice(at ?? this.#rows.length, 0, row);
    this.#byKey.set(view.key, row);
    return row;
  }

  /** Where a new child of `parent` goes: after the parent and everything below it. */
  #afterDescendants(parent: Row): number {
    const below = new Set([parent.view.key]);
    let at = this.#rows.indexOf(parent) + 1;
    while (at < this.#rows.length && below.has(this.#rows[at]!.view.parent ?? "")) below.add(this.#rows[at++]!.view.key);
    return at;
  }

  /** The first time the row takes a slot ends its time in the queue. */
  #markStarted(row: Row, now: number): void {
    row.view.startedAt ??= now;
    row.view.queuedMs ??= row.view.queuedAt === null ? null : now - row.view.queuedAt;
  }

  #conversation(row: Row): Conversation {
    row.view.hasConversation = true;
    row.conversation ??= new Conversation();
    return row.conversation;
  }

  #note(row: Row, text: string, now: number): void {
    this.#conversation(row).add({ kind: "note", text }, now);
  }

  #phase(row: Row, status: string, now: number): void {
    const view = row.view;
    // A task's end is final; a session that failed starts again with its next turn, and ends only when closed.
    if (view.kind === "session" ? view.status === "closed" : TASK_ENDS.has(view.status)) return;
    view.status = status;
    if (view.phases.at(-1)?.status !== status) view.phases.push({ status, at: now });
  }

  #finishRow(row: Row, result: TaskResult, now: number): void {
    const view = row.view;
    view.finishedAt ??= now;
    // The orchestrator's own measure of when the first attempt took its slot.
    if (result.startedAt !== undefined) {
      view.startedAt = result.startedAt;
      view.queuedMs = result.queuedMs;
      const started = view.phases.find((phase) => phase.status === "starting" || phase.status === "running");
      if (started) started.at = result.startedAt;
    }
    view.turns = Math.max(view.turns, result.numTurns);
    view.costUsd = result.costUsd;
    view.attempts = Math.max(view.attempts, result.attempts);
    view.error = result.error?.message ?? null;
    this.#phase(row, result.status, now);
    if (result.error) this.#note(row, `${result.status}: ${result.error.message}`, now);
    row.conversation?.end();
  }

  /** The swarm's word on a config task is final (a task stopped by Ctrl-C is cancelled even if its worker failed). */
  #settle(event: TaskSettledEvent, now: number): void {
    const row = this.#byKey.get(taskKey(event.task.name));
    if (!row) return;
    const view = row.view;
    if (!event.started) {
      view.error = event.result.error?.message ?? null;
      view.activity = event.carriedOver ? `kept from the run it resumes: ${event.result.text}` : (view.error ?? "");
      view.finishedAt = now;
    }
    if (event.carriedOver) Object.assign(view, { turns: event.result.numTurns, costUsd: event.result.costUsd, attempts: event.result.attempts });
    view.branch = event.worktree?.branch ?? view.branch;
    view.status = event.result.status;
    if (view.phases.at(-1)?.status !== view.status) view.phases.push({ status: view.status, at: now });
  }
}
