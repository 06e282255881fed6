import { writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { z } from "zod";
import type { TaskResult, Usage } from "../../orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../swarm/config/index.ts";
import { oneLine } from "../../util/one-line.ts";
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
});

/** summary.json: what a run did, per task and in total. */
export const SummarySchema = z.looseObject({
  swarm: z.string(),
  config: z.string(),
  rehearsal: z.boolean(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number(),
  /** True when Ctrl-C stopped the run; unfinished tasks are then "cancelled". */
  interrupted: z.boolean(),
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

/** 0 every task succeeded, 1 some did not, 130 interrupted (the shell's code for SIGINT). */
export function exitCodeFor(results: Iterable<TaskResult>, interrupted: boolean): number {
  if (interrupted) return 130;
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
  /** By task name; every config task has one. */
  results: ReadonlyMap<string, TaskResult>;
  totals: { costUsd: number; usage: Usage };
  /** Orchestrator task id → transcript file. */
  transcripts: ReadonlyMap<string, string>;
  outDir: string;
  rehearsal: boolean;
  startedAt: number;
  finishedAt: number;
  interrupted: boolean;
}

export function buildSummary(input: SummaryInput): Summary {
  const tasks = input.config.tasks.map((task): SummaryTask => {
    const result = input.results.get(task.name);
    if (result === undefined) throw new Error(`no result for task "${task.name}"`);
    const transcript = input.transcripts.get(result.id);
    return {
      name: task.name,
      agent: task.agent ?? null,
      status: result.status,
      text: result.text,
      cost_usd: result.costUsd,
      usage: usageJson(result.usage),
      num_turns: result.numTurns,
      duration_ms: result.durationMs,
      attempts: result.attempts,
      session_id: result.sessionId ?? null,
      depends_on: task.depends_on,
      transcript: transcript === undefined ? null : relative(input.outDir, transcript),
      error: result.error ?? null,
    };
  });
  const count = (status: SummaryTask["status"]) => tasks.filter((task) => task.status === status).length;
  return {
    swarm: input.config.name,
    config: input.config.file ?? "",
    rehearsal: input.rehearsal,
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.finishedAt).toISOString(),
    duration_ms: input.finishedAt - input.startedAt,
    interrupted: input.interrupted,
    exit_code: exitCodeFor(input.results.values(), input.interrupted),
    totals: {
      tasks: tasks.length,
      succeeded: count("succeeded"),
      failed: count("failed"),
      cancelled: count("cancelled"),
      skipped: count("skipped"),
      cost_usd: input.totals.costUsd,
      usage: usageJson(input.totals.usage),
      num_turns: tasks.reduce((sum, task) => sum + task.num_turns, 0),
    },
    tasks,
  };
}

export const SUMMARY_FILE = "summary.json";

export async function writeSummary(outDir: string, summary: Summary): Promise<string> {
  const path = join(outDir, SUMMARY_FILE);
  await writeFile(path, `${JSON.stringify(summary, null, 2)}\n`);
  return path;
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
    oneLine(task.error ? task.error.message : task.text, 500),
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
