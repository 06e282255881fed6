// The live terminal view of `cadre run`: one row per task, redrawn in place.
import { createLogUpdate } from "log-update";
import { cacheReadShare } from "../../../orchestrator/index.ts";
import { backgroundLine, planWindowLine, type RowStatus, type RunEvent, type RunModel, type RunRow } from "../../../run/index.ts";
import { printable } from "../../../util/one-line.ts";
import { type Colors, formatCacheShare, formatDuration, formatUsd, paint, postedName, table } from "./format.ts";
import type { RunView, ViewStream } from "./view.ts";

const SYMBOLS: Record<RowStatus, string> = {
  waiting: "·",
  queued: "○",
  starting: "▷",
  running: "▶",
  retrying: "↻",
  succeeded: "✔",
  failed: "✘",
  cancelled: "■",
  skipped: "↷",
  awaiting_permission: "?",
  idle: "·",
  closed: "■",
};

export interface FrameOptions {
  now: number;
  /** Terminal columns. */
  width: number;
  /** Terminal rows: with more tasks than fit, finished and waiting rows fold into a count. */
  height: number;
  colors: Colors;
}

/** How long the task waited for a slot: counting while it waits, the orchestrator's figure once it is done. */
function queued(row: RunRow, now: number): string {
  if (row.queuedMs !== null) return formatDuration(row.queuedMs);
  if (row.queuedAt === null) return "";
  return formatDuration((row.startedAt ?? now) - row.queuedAt);
}

/** Run time, from the task's start: what its time limit counts. */
function elapsed(row: RunRow, now: number): string {
  if (row.durationMs !== null) return formatDuration(row.durationMs);
  if (row.startedAt === null) return "";
  return formatDuration((row.finishedAt ?? now) - row.startedAt);
}

function activity(row: RunRow): string {
  if (row.status === "waiting" && row.activity === "" && row.waitsFor.length > 0) return `after ${row.waitsFor.join(", ")}`;
  return row.activity;
}

/** While a task runs, a line under it for each of its background tasks, and one for each agent of a workflow. */
function backgroundCells(row: RunRow, indent: string, statuses: RowStatus[]): string[][] {
  if (row.finishedAt !== null || row.background.length === 0) return [];
  const lines: string[][] = [];
  for (const task of row.background) {
    statuses.push(row.status);
    lines.push([`${indent}  ↳ ${task.description}`, task.status, "", "", "", "", backgroundLine(task)]);
    for (const agent of task.agents ?? []) {
      statuses.push(row.status);
      const tokens = agent.tokens === undefined ? "" : `${agent.tokens.toLocaleString("en-US")} tokens`;
      lines.push([
        `${indent}    ↳ ${agent.label ?? `agent ${agent.index}`}`,
        agent.state,
        "",
        "",
        "",
        "",
        [agent.phase, tokens].filter(Boolean).join(", "),
      ]);
    }
  }
  return lines;
}

/** Rows to show when not all fit: running ones first, then the others in order. */
function visibleRows(rows: readonly RunRow[], room: number): { shown: readonly RunRow[]; hidden: readonly RunRow[] } {
  if (rows.length <= room) return { shown: rows, hidden: [] };
  const urgent = new Set(rows.filter((r) => r.status === "running" || r.status === "retrying" || r.status === "failed").slice(0, room));
  const rest = rows.filter((r) => !urgent.has(r)).slice(0, Math.max(0, room - urgent.size));
  const keep = new Set([...urgent, ...rest]);
  return { shown: rows.filter((r) => keep.has(r)), hidden: rows.filter((r) => !keep.has(r)) };
}

function rateLimitLine(state: RunModel, now: number, c: Colors): string {
  const limit = state.rateLimit;
  if (limit === undefined || !limit.rateLimited) return c.dim("rate limit: ok");
  const wait = limit.backoffUntil !== null && limit.backoffUntil > now ? `, starts paused ${formatDuration(limit.backoffUntil - now)}` : "";
  return c.yellow(`rate limited: ${limit.effectiveLimit}/${limit.limit} workers${wait}`);
}

/** One frame of the live view: a title, one row per task, totals and the rate-limit state. Pure, so tests render it. */
export function renderFrame(state: RunModel, options: FrameOptions): string {
  const { now, width, colors: c } = options;
  const counts = state.counts();
  // A worker starting for its task holds its slot already: counted as running.
  const running = counts.starting + counts.running + counts.retrying;
  const done = counts.succeeded + counts.failed + counts.cancelled + counts.skipped;
  const total = state.rows.filter((r) => r.parent === null).length;
  const title = `${c.bold("cadre")} ${printable(state.title)}  ${done}/${total} done  ${formatDuration((state.finishedAt ?? now) - state.startedAt)}`;

  const { shown, hidden } = visibleRows(state.rows, Math.max(1, options.height - 5));
  // Each line's row status, for its colour: a task's, or the task's for the background work under it.
  const statuses: RowStatus[] = [];
  const cells = shown.flatMap((row) => {
    const indent = row.parent === null ? "" : "  ";
    statuses.push(row.status);
    const own = [
      `${indent}${SYMBOLS[row.status]} ${postedName(row.name, row.postedBy)}`,
      row.status,
      queued(row, now),
      elapsed(row, now),
      row.turns > 0 ? `${row.turns} turn${row.turns === 1 ? "" : "s"}` : "",
      row.costUsd > 0 ? formatUsd(row.costUsd, state.costSimulated) : "",
      activity(row),
    ];
    return [own, ...backgroundCells(row, indent, statuses)];
  });
  const lines = table([["task", "status", "queued", "time", "turns", "cost", "activity"], ...cells], width, (r, column, cell) => {
    if (r === 0) return c.dim(cell);
    const status = statuses[r - 1]!;
    if (column === 0 || column === 1) return paint(status, cell, c);
    return column === 6 ? c.dim(cell) : cell;
  });
  if (hidden.length > 0) lines.push(c.dim(`… ${hidden.length} more`));

  const parts = [
    running > 0 ? c.cyan(`${running} running`) : undefined,
    counts.queued > 0 ? `${counts.queued} queued` : undefined,
    counts.waiting > 0 ? `${counts.waiting} waiting` : undefined,
    counts.succeeded > 0 ? c.green(`${counts.succeeded} succeeded`) : undefined,
    counts.failed > 0 ? c.red(`${counts.failed} failed`) : undefined,
    counts.cancelled > 0 ? c.yellow(`${counts.cancelled} cancelled`) : undefined,
    counts.skipped > 0 ? c.yellow(`${counts.skipped} skipped`) : undefined,
    `${formatUsd(state.totalUsd, state.costSimulated)}${state.budgetUsd === undefined ? "" : ` of ${formatUsd(state.budgetUsd)}`}${state.costSimulated ? " (simulated)" : ""}`,
    state.totalUsage && cacheReadShare(state.totalUsage) ? `${formatCacheShare(cacheReadShare(state.totalUsage))} cached` : undefined,
  ].filter((part) => part !== undefined);
  const footer = [parts.join("  "), rateLimitLine(state, now, c)];
  if (state.budget) footer.push(c.red(`budget reached (${formatUsd(state.budget.spentUsd, state.costSimulated)}): no new tasks start`));
  if (state.planWindow) footer.push(c.yellow(planWindowLine(state.planWindow)));
  for (const [label, use] of state.budgets) {
    const text = `${printable(label)} ${formatUsd(use.spentUsd, state.costSimulated)} of ${formatUsd(use.limitUsd)}`;
    footer.push(use.reached ? c.red(`${text}: budget reached, its work stops`) : text);
  }
  if (state.interrupted) footer.push(c.yellow("interrupting: finishing up; Ctrl-C again kills the workers"));
  return [title, ...lines, footer.join("   ")].join("\n");
}

/** On a terminal: the frame redrawn in place on every event (at most every 100 ms) and once a second for the clocks. */
export class TtyView implements RunView {
  readonly #log: ReturnType<typeof createLogUpdate>;
  readonly #ticker: ReturnType<typeof setInterval>;
  #pending: ReturnType<typeof setTimeout> | undefined;
  #notices: string[] = [];

  readonly #out: ViewStream & NodeJS.WritableStream;
  readonly #state: RunModel;
  readonly #colors: Colors;

  constructor(out: ViewStream & NodeJS.WritableStream, state: RunModel, colors: Colors) {
    this.#out = out;
    this.#state = state;
    this.#colors = colors;

    this.#log = createLogUpdate(out);
    this.#ticker = setInterval(() => this.#draw(), 1000);
    this.#ticker.unref();
    this.#draw();
  }

  event(_event: RunEvent): void {
    this.#pending ??= setTimeout(() => {
      this.#pending = undefined;
      this.#draw();
    }, 100);
  }

  notice(text: string): void {
    this.#notices.push(printable(text));
    this.#draw();
  }

  stop(): void {
    clearInterval(this.#ticker);
    clearTimeout(this.#pending);
    this.#log.clear();
    this.#log.done();
    for (const text of this.#notices) this.#out.write(`${text}\n`);
  }

  #draw(): void {
    const height = (this.#out.rows ?? 30) - this.#notices.length;
    const frame = renderFrame(this.#state, { now: Date.now(), width: this.#out.columns ?? 100, height, colors: this.#colors });
    this.#log([...this.#notices.map((n) => this.#colors.dim(n)), frame].join("\n"));
  }
}
