import { renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import process from "node:process";
import { addUsage, cacheReadShare, cacheSavingUsd, type SessionRecord, type TaskResult, type Usage } from "../../orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../swarm/config/index.ts";
import type { TaskFingerprint } from "../../swarm/fingerprint.ts";
import { SUMMARY_FILE, type Summary, type SummarySession, type SummaryTask } from "../../swarm/record.ts";
import { unrunResult } from "../../swarm/runner.ts";
import type { WorktreeOutcome } from "../../swarm/worktree.ts";
import { oneLine } from "../../util/one-line.ts";
import { SIGNAL_EXIT_CODES, type StopSignal } from "../signals.ts";
import { resultLine, worktreeLine } from "./activity.ts";
import { type Colors, formatCacheShare, formatDuration, formatUsd, paint, table } from "./view/format.ts";

/** 0 every task succeeded, 1 some did not, 128 + the signal's number when a signal stopped the run (130 for Ctrl-C). */
export function exitCodeFor(results: Iterable<TaskResult>, stoppedBy: StopSignal | undefined): number {
  if (stoppedBy !== undefined) return SIGNAL_EXIT_CODES[stoppedBy];
  for (const result of results) if (result.status !== "succeeded") return 1;
  return 0;
}

function usageOf(json: SummaryTask["usage"]): Usage {
  return {
    inputTokens: json.input_tokens,
    outputTokens: json.output_tokens,
    cacheReadInputTokens: json.cache_read_input_tokens,
    cacheCreationInputTokens: json.cache_creation_input_tokens,
  };
}

function usageJson(usage: Usage): SummaryTask["usage"] {
  return {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
  };
}

export interface SummaryInput {
  config: ResolvedSwarmConfig;
  /** By task name; a task without one is still running or waiting (the record is then not complete). */
  results: ReadonlyMap<string, TaskResult>;
  /** By task name, for the tasks that started or were carried over. */
  fingerprints?: ReadonlyMap<string, TaskFingerprint>;
  /** The rows of tasks whose result was kept from an earlier attempt: they stand in the record as they were. */
  carriedOver?: ReadonlyMap<string, SummaryTask>;
  /** This attempt's number (default 1: no --resume). */
  attempt?: number;
  /** The record of the run this attempt resumes: its totals and sessions carry over. */
  previous?: Pick<Summary, "totals" | "sessions">;
  /** What the engine spent (the tasks and the sessions, when every session is listed). */
  totals: { costUsd: number; usage: Usage };
  /** Peers, supervisors and spawned children (Orchestrator.sessionRecords). */
  sessions: readonly SessionRecord[];
  /** Orchestrator task or session id → transcript file. */
  transcripts: ReadonlyMap<string, string>;
  /** Distributed runs: task or session id → the host that ran it. */
  hosts?: ReadonlyMap<string, string>;
  /** By task name, for tasks that worked in a worktree. */
  worktrees: ReadonlyMap<string, WorktreeOutcome>;
  runId: string;
  outDir: string;
  rehearsal: boolean;
  /** The budget the run applied, if any. */
  budgetUsd: number | undefined;
  startedAt: number;
  finishedAt: number;
  /** The signal that stopped the run, if one did. */
  stoppedBy: StopSignal | undefined;
}

export function buildSummary(input: SummaryInput): Summary {
  const transcriptOf = (id: string) => {
    const path = input.transcripts.get(id);
    return path === undefined ? null : relative(input.outDir, path);
  };
  const complete = input.config.tasks.every((task) => input.results.has(task.name));
  const tasks = input.config.tasks.map((task): SummaryTask => {
    const kept = input.carriedOver?.get(task.name);
    if (kept !== undefined) return { ...kept, carried_over: true };
    const result = input.results.get(task.name) ?? unrunResult(task, "cancelled", UNFINISHED);
    const worktree = input.worktrees.get(task.name);
    const fingerprint = input.fingerprints?.get(task.name);
    return {
      name: task.name,
      agent: task.agent ?? null,
      status: result.status,
      text: result.text,
      structured_output: result.structuredOutput ?? null,
      cost_usd: result.costUsd,
      usage: usageJson(result.usage),
      num_turns: result.numTurns,
      queued_ms: result.queuedMs,
      started_at: result.startedAt === undefined ? null : new Date(result.startedAt).toISOString(),
      finished_at: new Date(result.finishedAt).toISOString(),
      duration_ms: result.durationMs,
      attempts: result.attempts,
      session_id: result.sessionId ?? null,
      depends_on: task.depends_on,
      transcript: transcriptOf(result.id),
      error: result.error ?? null,
      ...(input.hosts && { host: input.hosts.get(result.id) ?? null }),
      ...(worktree !== undefined && {
        branch: worktree.branch,
        commit: worktree.commit,
        base: worktree.base,
        diff_stat: worktree.diffStat,
        worktree: worktree.path,
      }),
      fingerprint: fingerprint ?? null,
    };
  });
  const attemptSessions = input.sessions.map(
    (session): SummarySession => ({
      role: session.role,
      name: session.name,
      agent: session.agent ?? null,
      parent: session.parent ?? null,
      session_id: session.sessionId ?? null,
      cost_usd: session.costUsd,
      usage: usageJson(session.usage),
      num_turns: session.numTurns,
      status: session.status ?? null,
      transcript: transcriptOf(session.id),
      ...(input.hosts && { host: input.hosts.get(session.id) ?? null }),
    }),
  );
  const sessions = [...(input.previous?.sessions ?? []).map((session) => ({ ...session, carried_over: true })), ...attemptSessions];
  const count = (status: SummaryTask["status"]) => tasks.filter((task) => task.status === status).length;
  // The whole run's totals: what earlier attempts spent, and what this one did (the tasks it ran, its sessions).
  const ranNow = [...tasks.filter((task) => !task.carried_over), ...attemptSessions];
  const earlier = input.previous?.totals;
  const usage = { ...input.totals.usage };
  if (earlier) addUsage(usage, earlier.usage);
  return {
    swarm: input.config.name,
    run_id: input.runId,
    config: input.config.file ?? "",
    rehearsal: input.rehearsal,
    cost_simulated: input.rehearsal,
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.finishedAt).toISOString(),
    duration_ms: input.finishedAt - input.startedAt,
    interrupted: input.stoppedBy !== undefined,
    complete,
    attempt: input.attempt ?? 1,
    exit_code: exitCodeFor(input.results.values(), input.stoppedBy),
    budget_usd: input.budgetUsd ?? null,
    totals: {
      tasks: tasks.length,
      succeeded: count("succeeded"),
      failed: count("failed"),
      cancelled: count("cancelled"),
      skipped: count("skipped"),
      cost_usd: (earlier?.cost_usd ?? 0) + input.totals.costUsd,
      usage: usageJson(usage),
      cache_saved_usd: ranNow.reduce((sum, entry) => sum + cacheSavingUsd(entry.usage, entry.cost_usd), earlier?.cache_saved_usd ?? 0),
      num_turns: ranNow.reduce((sum, entry) => sum + entry.num_turns, earlier?.num_turns ?? 0),
    },
    attempt_totals: {
      tasks_run: tasks.filter((task) => task.fingerprint !== null && !task.carried_over).length,
      cost_usd: input.totals.costUsd,
    },
    tasks,
    sessions,
  };
}

/** How a task that has not finished shows in a record written while the run goes on. */
const UNFINISHED = { code: "UNFINISHED", message: "still running or waiting when this record was written" };

/**
 * Writes summary.json whole or not at all (a temporary file renamed over
 * it), so a reader, or a resume after SIGKILL, never finds half a record.
 */
export function writeSummarySync(outDir: string, summary: Summary): string {
  const path = join(outDir, SUMMARY_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(summary, null, 2)}\n`);
  renameSync(temporary, path);
  return path;
}

/** A task's result column: its error or answer, after the branch its worktree's work went to. */
function resultCell(task: SummaryTask): string {
  const answer = resultLine({ text: task.text, error: task.error ?? undefined, structuredOutput: task.structured_output ?? undefined }, 500);
  if (task.diff_stat === undefined) return answer;
  return oneLine(`${worktreeLine({ branch: task.branch ?? null, diffStat: task.diff_stat })}; ${answer}`, 500);
}

/** The table printed when the run ends: one row per task, one per other session (indented), then the totals, their sum. */
export function renderFinalTable(summary: Summary, options: { width: number; colors: Colors }): string {
  const c = options.colors;
  const header = ["task", "status", "turns", "cost", "cached", "queued", "time", "result"];
  const rows = summary.tasks.map((task) => [
    task.name,
    task.status,
    String(task.num_turns),
    formatUsd(task.cost_usd, summary.cost_simulated),
    formatCacheShare(cacheReadShare(usageOf(task.usage))),
    task.started_at === null && task.queued_ms === 0 ? "" : formatDuration(task.queued_ms),
    formatDuration(task.duration_ms),
    resultCell(task),
  ]);
  const sessionRows = summary.sessions.map((session) => [
    `  ${session.name}`,
    session.status ?? session.role,
    String(session.num_turns),
    formatUsd(session.cost_usd, summary.cost_simulated),
    formatCacheShare(cacheReadShare(usageOf(session.usage))),
    "",
    "",
    `${session.role}${session.parent === null ? "" : ` for ${session.parent}`}`,
  ]);
  const statuses = [...summary.tasks.map((task) => task.status), ...summary.sessions.map((session) => session.status ?? "waiting")];
  const lines = table([header, ...rows, ...sessionRows], options.width, (r, column, cell) => {
    if (r === 0) return c.bold(cell);
    return column === 1 ? paint(statuses[r - 1]!, cell, c) : cell;
  });
  const t = summary.totals;
  const parts = [`${t.succeeded}/${t.tasks} succeeded`];
  if (t.failed > 0) parts.push(c.red(`${t.failed} failed`));
  if (t.cancelled > 0) parts.push(c.yellow(`${t.cancelled} cancelled`));
  if (t.skipped > 0) parts.push(c.yellow(`${t.skipped} skipped`));
  const share = cacheReadShare(usageOf(t.usage));
  parts.push(
    `${t.num_turns} turns`,
    `${formatUsd(t.cost_usd, summary.cost_simulated)}${summary.cost_simulated ? " (simulated)" : ""}`,
    ...(share !== undefined && share > 0
      ? [`${formatCacheShare(share)} of input from cache (saved ${formatUsd(t.cache_saved_usd, summary.cost_simulated)})`]
      : []),
    formatDuration(summary.duration_ms),
  );
  if (summary.interrupted) parts.push(c.yellow("interrupted"));
  return [...lines, "", `${c.bold("total")}  ${parts.join(", ")}`].join("\n");
}
