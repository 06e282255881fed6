// A run the dashboard shows as it happens: the run's read-model, the scheduler's limits and the conversations.
import { cacheReadShare, type RateLimitState } from "../orchestrator/index.ts";
import type { LenientSummary, RunChange, RunModel, RunRow, SteerableRun } from "../run/index.ts";
import { EventHub } from "../util/event-hub.ts";
import { Conversation, describePermission, permissionEntry } from "./conversation.ts";
import { DashboardError } from "./errors.ts";
import {
  backgroundView,
  type PendingView,
  type PermissionAnswer,
  type RowView,
  type RunFeed,
  type RunSnapshot,
  type SteerRequest,
  type TotalsView,
} from "./feed.ts";
import { readTranscript, recordRowViews, recordTotals, recordTranscript } from "./record-view.ts";
import { liveWorkflowView, recordWorkflowView } from "./workflow-view.ts";

export interface LiveRunOptions {
  id: string;
  /** The run's read-model: the dashboard shows its rows and totals. */
  model: RunModel;
  /** The orchestrator's scheduler: the limits in force and the slots in use. */
  scheduler?: { readonly rateLimit: RateLimitState; readonly running: number };
  /** Answers a task's or session's permission request (`cadre mcp`); without it the page only shows them. */
  answer?: (taskId: string, requestId: string, answer: PermissionAnswer) => void;
  /** The run (`cadre run --ui`): the page's messages, interrupts and stops reach its running tasks; without it the page only shows them. */
  steer?: SteerableRun;
}

/** Statuses in which a row holds a slot. */
const ACTIVE = new Set(["running", "retrying", "awaiting_permission"]);

/**
 * A live run as the page sees it: the rows and totals of the run's model,
 * the conversation of each row (built from the events the model heard), and
 * the answers to permission requests. Once the run is over, its record
 * (summary.json) adds the final figures and the sessions it ran.
 */
export class LiveRun implements RunFeed {
  readonly id: string;
  readonly #options: LiveRunOptions;
  readonly #model: RunModel;
  readonly #conversations = new Map<string, Conversation>();
  readonly #ended = new EventHub<void>();
  #finishedAt: number | null = null;
  #record: { record: LenientSummary; dir: string } | undefined;
  /** The rows once the run is over: the model's, with the record's figures and sessions. */
  #final: RowView[] | undefined;

  constructor(options: LiveRunOptions) {
    this.id = options.id;
    this.#options = options;
    this.#model = options.model;
    this.#model.onChange((change) => this.#converse(change));
  }

  onChange(listener: () => void): () => void {
    const offModel = this.#model.onChange(() => listener());
    const offEnd = this.#ended.on(listener);
    return () => {
      offModel();
      offEnd();
    };
  }

  /** The run is over: its record (summary.json, in `dir`) has the final figures and the sessions it ran. */
  finish(now: number, record?: { record: LenientSummary; dir: string }): void {
    this.#finishedAt = now;
    this.#record = record;
    this.#final = record ? withRecord(this.#views(now), recordRowViews(record.record)) : undefined;
    for (const conversation of this.#conversations.values()) conversation.end();
    this.#ended.emit();
  }

  async conversation(key: string): Promise<Conversation | undefined> {
    const own = this.#conversations.get(key);
    if (own) return own;
    const path = this.#record && recordTranscript(this.#record.record, this.#record.dir, key);
    return path === undefined ? undefined : readTranscript(path);
  }

  answer(key: string, requestId: string, answer: PermissionAnswer): void {
    const row = this.#model.row(key);
    const answerer = this.#options.answer;
    if (!answerer) throw new DashboardError("NOT_ANSWERABLE", "this dashboard shows permission requests but cannot answer them");
    if (!row?.taskId || !row.pending.some((p) => p.requestId === requestId))
      throw new DashboardError("UNKNOWN_REQUEST", `no waiting permission request "${requestId}" on ${key}`);
    answerer(row.taskId, requestId, answer);
  }

  async steer(request: SteerRequest): Promise<void> {
    const run = this.#options.steer;
    if (!run || this.#finishedAt !== null)
      throw new DashboardError("NOT_STEERABLE", "the tasks of this run cannot be reached from the page (it has ended)");
    const row = this.#model.row(request.row);
    if (!row) throw new DashboardError("UNKNOWN_ROW", `no task "${request.row}" in this run`);
    const origin = { from: "the dashboard" };
    if (request.action === "send") await run.send(row.name, request.text, origin);
    else if (request.action === "stop") await run.stopTask(row.name, origin);
    else await run.interrupt(row.name, origin);
  }

  snapshot(now: number): RunSnapshot {
    return this.#snapshot(now, this.#final ?? this.#views(now));
  }

  changedSince(now: number, since: number, rowCount: number): RunSnapshot | undefined {
    const rows = this.#model.rows;
    if (this.#final !== undefined || rows.length !== rowCount) return undefined;
    const changed: RowView[] = [];
    for (const row of rows) if (row.version > since) changed.push(this.#view(row, now));
    return this.#snapshot(now, changed);
  }

  /** The run's figures, with `rows` (all of them, or those that changed). */
  #snapshot(now: number, rows: RowView[]): RunSnapshot {
    const model = this.#model;
    const finished = this.#finishedAt !== null;
    const record = this.#record?.record;
    return {
      id: this.id,
      title: model.title,
      mode: model.mode,
      live: !finished,
      finished,
      startedAt: model.startedAt,
      finishedAt: this.#finishedAt,
      now,
      seq: model.seq,
      rows,
      // At the end, the figures summary.json states.
      totals: record ? { ...recordTotals(record), budgetUsd: model.budgetUsd ?? null, budgetExceeded: model.budget !== undefined } : this.#totals(),
      rateLimit: finished ? null : (this.#options.scheduler?.rateLimit ?? null),
      running: this.#options.scheduler?.running ?? model.rows.filter((r) => ACTIVE.has(r.status)).length,
      answerable: this.#options.answer !== undefined,
      steerable: this.#options.steer !== undefined && !finished,
      costSimulated: record?.cost_simulated ?? model.costSimulated,
      notice: null,
      workflow: (record && recordWorkflowView(record)) ?? liveWorkflowView(model),
    };
  }

  #views(now: number): RowView[] {
    return this.#model.rows.map((row) => this.#view(row, now));
  }

  #view(row: RunRow, now: number): RowView {
    return {
      key: row.key,
      name: row.name,
      agent: row.agent,
      kind: row.kind,
      parent: row.parent,
      group: row.group,
      postedBy: row.postedBy,
      status: row.status,
      attempts: row.attempts,
      turns: row.turns,
      costUsd: row.costUsd,
      queuedAt: row.queuedAt,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
      queuedMs: row.queuedMs,
      runMs: row.startedAt === null ? null : (row.finishedAt ?? now) - row.startedAt,
      phases: row.phases.map((phase) => ({ ...phase })),
      branch: row.branch,
      activity: row.activity,
      error: row.error,
      waitsFor: [...row.waitsFor],
      hasConversation: this.#conversations.has(row.key),
      background: row.background.map(backgroundView),
      pending: row.pending.map(({ requestId, request, since }): PendingView => {
        const { kind, ask, input, questions } = describePermission(request);
        return { requestId, toolName: request.toolName, kind, ask, input, ...(questions && { questions }), since };
      }),
      phase: row.callPhase,
    };
  }

  #totals(): TotalsView {
    const model = this.#model;
    const top = model.rows.filter((r) => r.parent === null && r.kind !== "peer" && r.kind !== "supervisor");
    const byStatus: Record<string, number> = {};
    for (const row of top) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
    return {
      tasks: top.length,
      byStatus,
      turns: top.reduce((sum, r) => sum + r.turns, 0),
      costUsd: model.totalUsd,
      cacheReadShare: model.totalUsage ? (cacheReadShare(model.totalUsage) ?? null) : null,
      budgetUsd: model.budgetUsd ?? null,
      budgetExceeded: model.budget !== undefined,
      byAgent: model.spendByAgent().map(({ agent, costUsd }) => ({
        agent,
        costUsd,
        budgetUsd: model.budgets.get(`agent ${agent}`)?.limitUsd ?? null,
      })),
      budgets: [...model.budgets].map(([budget, { limitUsd, spentUsd, reached }]) => ({ budget, limitUsd, spentUsd, reached })),
    };
  }

  /** A row's conversation: what its worker said, and cadre's notes on it (attempts, retries, hooks, permissions, errors). */
  #converse({ event, row, at }: RunChange): void {
    if (row === undefined) return;
    const conversation = () => {
      const own = this.#conversations.get(row.key) ?? new Conversation();
      this.#conversations.set(row.key, own);
      return own;
    };
    const note = (text: string) => conversation().add({ kind: "note", text }, at);
    switch (event.type) {
      case "task_message":
        conversation().addMessage(event.message, at);
        break;
      case "task_started":
        if (event.attempt > 1) note(`attempt ${event.attempt}`);
        break;
      case "task_retry":
        note(`retry in ${(event.delayMs / 1000).toFixed(1)} s: ${event.error.message}`);
        break;
      case "permission_request":
        conversation().add(permissionEntry(event.requestId, event.request), at);
        break;
      case "permission_settled":
        conversation().add({ kind: "permission_settled", requestId: event.requestId }, at);
        break;
      case "hook_failed":
        note(`${event.event} hook failed: ${event.error.message}`);
        break;
      case "task_finished":
        if (event.result.error) note(`${event.result.status}: ${event.result.error.message}`);
        this.#conversations.get(row.key)?.end();
        break;
      case "session_status":
        if (event.status === "closed") this.#conversations.get(row.key)?.end();
        break;
      default:
        break;
    }
  }
}

/** The model's rows with the record's final figures; the sessions only the record names (peers, supervisors) join after their task. */
function withRecord(rows: RowView[], recorded: RowView[]): RowView[] {
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const children = new Map(rows.filter((row) => row.kind === "child").map((row) => [`${row.parent} ${row.name}`, row]));
  // A task the run made (a for_each's copy, a loop's round) may have its row by its worker's id, queued before it was named.
  const tasks = new Map(rows.filter((row) => row.kind === "task" && row.parent === null).map((row) => [row.name, row]));
  const merged = [...rows];
  for (const row of recorded) {
    // A spawned child is a row already: the record names it and its parent as the live run did.
    const own = byKey.get(row.key) ?? (row.kind === "task" && row.parent === null ? tasks.get(row.name) : children.get(`${row.parent} ${row.name}`));
    if (own) {
      Object.assign(own, { turns: row.turns, costUsd: row.costUsd, status: row.status, group: own.group ?? row.group });
      continue;
    }
    let at = merged.length;
    if (row.parent !== null) {
      const below = new Set([row.parent]);
      at = merged.findIndex((r) => r.key === row.parent) + 1;
      while (at > 0 && at < merged.length && below.has(merged[at]!.parent ?? "")) below.add(merged[at++]!.key);
      if (at === 0) at = merged.length;
    }
    merged.splice(at, 0, row);
    byKey.set(row.key, row);
  }
  return merged;
}
