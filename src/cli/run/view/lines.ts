// The plain view of `cadre run` in CI or a pipe: one timestamped line per event worth a log line.
import { budgetLabel, type TaskResult } from "../../../orchestrator/index.ts";
import { activityOf, backgroundLine, planWindowLine, type RunEvent, type RunModel, resultLine, worktreeLine } from "../../../run/index.ts";
import { oneLine, printable } from "../../../util/one-line.ts";
import { formatDuration, formatUsd } from "./format.ts";
import type { RunView, ViewStream } from "./view.ts";

/** 14:03:07, local time: CI logs add their own dates. */
export function clock(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}

/** The line an event deserves in a log, or undefined for events that only feed the live view. */
export function describeEvent(event: RunEvent, state: RunModel): string | undefined {
  switch (event.type) {
    case "task_settled":
      if (event.carriedOver) return `${event.task.name}: carried over from the resumed run (${event.result.status})`;
      // A task that ran was described when the orchestrator finished it; what its worktree came to is known only now.
      if (!event.started) return describeResult(event.result, state);
      return event.worktree === undefined ? undefined : `${event.task.name}: ${worktreeLine(event.worktree)}`;
    case "tasks_added":
      // A posted task is told as it joins the run; a for_each's copies and a loop's rounds when they start.
      return postedLine(event.tasks);
    case "task_rerun":
      return `${event.task.name}: runs again, ${event.reason}${event.resumedSession ? `; continuing session ${event.resumedSession}` : ""}`;
    case "task_started":
      return `${event.task.name}: started${event.attempt > 1 ? ` (attempt ${event.attempt})` : ""}`;
    case "task_message": {
      const what = activityOf(event.message);
      return what === undefined ? undefined : `${event.task.name}: ${what}`;
    }
    case "task_retry":
      return `${event.task.name}: retry in ${formatDuration(event.delayMs)} after ${oneLine(event.error.message)}`;
    case "task_finished":
      return describeResult(event.result, state);
    case "rate_limit": {
      const { state: limit } = event;
      if (!limit.rateLimited) return `rate limit lifted: up to ${limit.effectiveLimit} workers`;
      const wait = limit.backoffUntil === null ? "" : `, pausing starts for ${formatDuration(Math.max(0, limit.backoffUntil - Date.now()))}`;
      return `rate limited: up to ${limit.effectiveLimit} of ${limit.limit} workers${wait}`;
    }
    case "plan_window":
      return planWindowLine(event);
    case "budget_exceeded":
      return event.scope === undefined || event.scope.kind === "run"
        ? `budget reached: spent ${formatUsd(event.spentUsd, state.costSimulated)} of ${formatUsd(event.budgetUsd)}; no new tasks start`
        : `budget reached: ${budgetLabel(event.scope)} spent ${formatUsd(event.spentUsd, state.costSimulated)} of ${formatUsd(event.budgetUsd)}; its work stops, the rest goes on`;
    case "permission_request":
      return `${event.task.name}: asks permission for ${event.request.toolName}`;
    case "hook_failed":
      return `${event.task.name}: ${event.event} hook failed: ${oneLine(event.error.message)}`;
    case "background_task": {
      // Its start (task_started, before any progress) and its end (the notification, with the summary); not every step between.
      const { background } = event;
      const started = background.status === "running" && background.usage === undefined && background.agents === undefined;
      const ended = background.status !== "running" && (background.summary !== undefined || background.outputFile !== undefined);
      return started || ended ? `${event.task.name}: ${backgroundLine(background)}` : undefined;
    }
    default:
      return undefined;
  }
}

/** "fix-cache: posted by lead": a task an agent posted, as it joins the run (a resumed run's posts again too); one line. */
function postedLine(tasks: Extract<RunEvent, { type: "tasks_added" }>["tasks"]): string | undefined {
  const posts = tasks.flatMap(({ name, posted }) =>
    posted === undefined ? [] : [`${name}: posted by ${posted.by}${posted.depth > 1 ? ` (depth ${posted.depth})` : ""}`],
  );
  return posts.length === 0 ? undefined : posts.join("; ");
}

function describeResult(result: TaskResult, state: RunModel): string {
  const parent = state.rowOfTask(result.id)?.parent;
  const parentName = parent ? state.row(parent)?.name : undefined;
  const stats = `${result.numTurns} turn${result.numTurns === 1 ? "" : "s"}, ${formatUsd(result.costUsd, state.costSimulated)}, ${formatDuration(result.durationMs)}`;
  const detail = resultLine(result);
  return `${result.name}: ${result.status}${result.attempts > 0 ? ` (${stats})` : ""}${detail ? `: ${detail}` : ""}${parentName ? ` [for ${parentName}]` : ""}`;
}

/** Not a terminal (CI, pipes): one plain, timestamped line per event worth logging. */
export class LinesView implements RunView {
  readonly #out: ViewStream;
  readonly #state: RunModel;
  readonly #now: () => number;

  constructor(out: ViewStream, state: RunModel, now: () => number = Date.now) {
    this.#out = out;
    this.#state = state;
    this.#now = now;
  }

  event(event: RunEvent): void {
    const line = describeEvent(event, this.#state);
    if (line !== undefined) this.#write(line);
  }

  notice(text: string): void {
    this.#write(text);
  }

  stop(): void {}

  #write(line: string): void {
    // Task names, replies and errors come from configs and models: shown, never obeyed, by the terminal.
    this.#out.write(`${clock(this.#now())} ${printable(line)}\n`);
  }
}
