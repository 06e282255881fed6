import { renameSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import process from "node:process";
import { z } from "zod";
import type { TaskResult, Usage } from "../../orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../swarm/config/index.ts";
import type { TaskFingerprint } from "../../swarm/fingerprint.ts";
import { unrunResult } from "../../swarm/runner.ts";
import type { WorktreeOutcome } from "../../swarm/worktree.ts";
import { oneLine } from "../../util/one-line.ts";
import { SIGNAL_EXIT_CODES, type StopSignal } from "../signals.ts";
import { resultLine, worktreeLine } from "./activity.ts";
import { type Colors, formatDuration, formatUsd, paint, table } from "./view/format.ts";

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

/** summary.json: what a run did, per task and in total. */
export const SummarySchema = z.looseObject({
  swarm: z.string(),
  /** Names the run's branches: cadre/<run_id>/<task>. */
  run_id: z.string(),
  config: z.string(),
  rehearsal: z.boolean(),
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
    /** Everything the run spent, peer and supervisor sessions included. */
    cost_usd: z.number(),
    usage: UsageSchema,
    num_turns: z.number(),
  }),
  tasks: z.array(SummaryTaskSchema),
});
export type Summary = z.infer<typeof SummarySchema>;
export type SummaryTask = z.infer<typeof SummaryTaskSchema>;

/** 0 every task succeeded, 1 some did not, 128 + the signal's number when a signal stopped the run (130 for Ctrl-C). */
export function exitCodeFor(results: Iterable<TaskResult>, stoppedBy: StopSignal | undefined): number {
  if (stoppedBy !== undefined) return SIGNAL_EXIT_CODES[stoppedBy];
  for (const result of results) if (result.status !== "succeeded") return 1;
  return 0;
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
  totals: { costUsd: number; usage: Usage };
  /** Orchestrator task id → transcript file. */
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
  const complete = input.config.tasks.every((task) => input.results.has(task.name));
  const tasks = input.config.tasks.map((task): SummaryTask => {
    const kept = input.carriedOver?.get(task.name);
    if (kept !== undefined) return { ...kept, carried_over: true };
    const result = input.results.get(task.name) ?? unrunResult(task, "cancelled", UNFINISHED);
    const transcript = input.transcripts.get(result.id);
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
      duration_ms: result.durationMs,
      attempts: result.attempts,
      session_id: result.sessionId ?? null,
      depends_on: task.depends_on,
      transcript: transcript === undefined ? null : relative(input.outDir, transcript),
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
  const count = (status: SummaryTask["status"]) => tasks.filter((task) => task.status === status).length;
  return {
    swarm: input.config.name,
    run_id: input.runId,
    config: input.config.file ?? "",
    rehearsal: input.rehearsal,
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
      num_turns: tasks.reduce((sum, task) => sum + task.num_turns, 0),
    },
    attempt_totals: {
      tasks_run: tasks.filter((task) => task.fingerprint !== null && !task.carried_over).length,
      cost_usd: input.totals.costUsd,
    },
    tasks,
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

/** The table printed when the run ends: one row per task, then the totals. */
export function renderFinalTable(summary: Summary, options: { width: number; colors: Colors }): string {
  const c = options.colors;
  const header = ["task", "status", "turns", "cost", "time", "result"];
  const rows = summary.tasks.map((task) => [
    task.name,
    task.status,
    String(task.num_turns),
    formatUsd(task.cost_usd),
    formatDuration(task.duration_ms),
    resultCell(task),
  ]);
  const lines = table([header, ...rows], options.width, (r, column, cell) => {
    if (r === 0) return c.bold(cell);
    return column === 1 ? paint(summary.tasks[r - 1]!.status, cell, c) : cell;
  });
  const t = summary.totals;
  const parts = [`${t.succeeded}/${t.tasks} succeeded`];
  if (t.failed > 0) parts.push(c.red(`${t.failed} failed`));
  if (t.cancelled > 0) parts.push(c.yellow(`${t.cancelled} cancelled`));
  if (t.skipped > 0) parts.push(c.yellow(`${t.skipped} skipped`));
  parts.push(`${t.num_turns} turns`, formatUsd(t.cost_usd), formatDuration(summary.duration_ms));
  if (summary.interrupted) parts.push(c.yellow("interrupted"));
  return [...lines, "", `${c.bold("total")}  ${parts.join(", ")}`].join("\n");
}
