import { renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import process from "node:process";
import { z } from "zod";
import { cacheReadShare, cacheSavingUsd, type SessionRecord, type TaskResult, type Usage } from "../../orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../swarm/config/index.ts";
import type { TaskFingerprint } from "../../swarm/fingerprint.ts";
import { unrunResult } from "../../swarm/runner.ts";
import type { WorktreeOutcome } from "../../swarm/worktree.ts";
import { oneLine } from "../../util/one-line.ts";
import { SIGNAL_EXIT_CODES, type StopSignal } from "../signals.ts";
import { resultLine, worktreeLine } from "./activity.ts";
import { type Colors, formatCacheShare, formatDuration, formatUsd, paint, table } from "./view/format.ts";

const UsageSchema = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_input_tokens: z.number(),
  cache_creation_input_tokens: z.number(),
});

export const SummaryTaskSchema = z.looseObject({
  name: z.string(),
  agent: z.string().nullable(),
  status: z.enum(["succeeded", "failed", "cancelled", "skipped"]),
  /** The final text of the task's last turn. */
  text: z.string(),
  /** With an output_schema: the answer, as the CLI validated it against the schema; else null. */
  structured_output: z.unknown(),
  cost_usd: z.number(),
  usage: UsageSchema,
  num_turns: z.number(),
  /** How long it waited for a slot once its dependencies were done. */
  queued_ms: z.number(),
  /** When it first took a slot; null if it never ran. */
  started_at: z.string().nullable(),
  finished_at: z.string(),
  /** Run time, from started_at to finished_at: its time limit counts the same way. */
  duration_ms: z.number(),
  attempts: z.number(),
  session_id: z.string().nullable(),
  depends_on: z.array(z.string()),
  /** The task's JSONL transcript, relative to the summary; null when the worker never said anything. */
  transcript: z.string().nullable(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  /** Distributed runs: the host (`cadre worker --name`) that ran the task; null when none did. */
  host: z.string().nullable().optional(),
  /** With a worktree: the branch holding what the task changed, and its commit (null when it changed nothing: no branch is left). */
  branch: z.string().nullable().optional(),
  commit: z.string().nullable().optional(),
  /** With a worktree: the commit it started from. */
  base: z.string().optional(),
  /** With a worktree: `git diff --shortstat` from base to commit. */
  diff_stat: z.string().optional(),
  /** With keep_worktrees: where the task's worktree still is. */
  worktree: z.string().nullable().optional(),
  /** What the result depends on; `cadre run --resume` keeps a result while both still match. Null for a task that never started. */
  fingerprint: z.object({ prompt: z.string(), settings: z.string() }).nullable().optional(),
  /** True when this result was kept from an earlier attempt of the run (`--resume`) rather than run in this one. */
  carried_over: z.boolean().optional(),
});

/** A worker session beside the tasks: a peer (ask_peer), a hook supervisor, or a child (spawn_worker). */
export const SummarySessionSchema = z.looseObject({
  role: z.enum(["peer", "supervisor", "child"]),
  /** "peer:<agent>", "supervisor:<agent>", or a child's task name ("<parent>/child"). */
  name: z.string(),
  agent: z.string().nullable(),
  /** The task it worked for: a child's parent; for a peer or supervisor (which serve many), the task that started it. */
  parent: z.string().nullable(),
  session_id: z.string().nullable(),
  cost_usd: z.number(),
  usage: UsageSchema,
  num_turns: z.number(),
  /** A child's outcome; null for peers and supervisors. */
  status: z.enum(["succeeded", "failed", "cancelled", "skipped"]).nullable(),
  transcript: z.string().nullable(),
});

/** summary.json: what a run did, per task and per other session, and in total. */
export const SummarySchema = z.looseObject({
  swarm: z.string(),
  /** Names the run's branches: cadre/<run_id>/<task>. */
  run_id: z.string(),
  config: z.string(),
  rehearsal: z.boolean(),
  /** True for a rehearsal: its costs are what the scripted model's tokens would cost, not money spent. */
  cost_simulated: z.boolean(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number(),
  /** True when a signal (Ctrl-C, SIGTERM, a hang-up) stopped the run; unfinished tasks are then "cancelled". */
  interrupted: z.boolean(),
  /**
   * False while the run is still going: the record is rewritten as each task
   * ends, and a task not yet finished shows as cancelled (UNFINISHED), so a
   * run that was killed can be resumed from it.
   */
  complete: z.boolean().optional(),
  /** 1 for the first run; each `--resume` adds one. */
  attempt: z.number().optional(),
  /** What this attempt alone spent and ran; `totals` are for the whole run, earlier attempts included. */
  attempt_totals: z.looseObject({ tasks_run: z.number(), cost_usd: z.number() }).optional(),
  exit_code: z.number(),
  totals: z.looseObject({
    tasks: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    cancelled: z.number(),
    skipped: z.number(),
    /** Everything the run spent: in a local run, the sum of its tasks' and sessions' (each is listed). */
    cost_usd: z.number(),
    usage: UsageSchema,
    /**
     * What the cache reads saved: their tokens priced as cache writes, less
     * their price as reads; the sum over tasks and sessions, each estimated
     * at the API's price ratios from the cost the CLI reported for it.
     */
    cache_saved_usd: z.number(),
    num_turns: z.number(),
  }),
  tasks: z.array(SummaryTaskSchema),
  sessions: z.array(SummarySessionSchema),
});
export type Summary = z.infer<typeof SummarySchema>;
export type SummaryTask = z.infer<typeof SummaryTaskSchema>;
export type SummarySession = z.infer<typeof SummarySessionSchema>;

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
  /** This attempt's number (default 1: no --resume), and what earlier attempts spent (default 0). */
  attempt?: number;
  earlierCostUsd?: number;
  /** What the engine spent (the tasks and the sessions, when every session is listed). */
  totals: { costUsd: number; usage: Usage };
  /** Peers, supervisors and spawned children (Orchestrator.sessionRecords). */
  sessions: readonly SessionRecord[];
  /** Orchestrator task or session id → transcript file. */
  transcripts: ReadonlyMap<string, string>;
  /** Distributed runs: task id → the host that ran it. */
  hosts?: ReadonlyMap<string, string>;
  /** By task name, for tasks that worked in a worktree. */
  worktrees: ReadonlyMap<string, WorktreeOutcome>;
  runId: string;
  outDir: string;
  rehearsal: boolean;
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
  const sessions = input.sessions.map(
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
    }),
  );
  const count = (status: SummaryTask["status"]) => tasks.filter((task) => task.status === status).length;
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
    totals: {
      tasks: tasks.length,
      succeeded: count("succeeded"),
      failed: count("failed"),
      cancelled: count("cancelled"),
      skipped: count("skipped"),
      cost_usd: (input.earlierCostUsd ?? 0) + input.totals.costUsd,
      usage: usageJson(input.totals.usage),
      cache_saved_usd: [...tasks, ...sessions].reduce((sum, entry) => sum + cacheSavingUsd(entry.usage, entry.cost_usd), 0),
      num_turns: [...tasks, ...sessions].reduce((sum, entry) => sum + entry.num_turns, 0),
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

export const SUMMARY_FILE = "summary.json";

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
