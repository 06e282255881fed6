// What `cadre run` settles before anything starts: the run to replay, the config, the run to resume, claude, the run directory, telemetry.
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import process from "node:process";
import {
  placeRun,
  planReplay,
  planResume,
  prepareOutDir,
  RecordWriteError,
  ReplayError,
  type ReplayPlan,
  ResumeError,
  type ResumePlan,
} from "../../run/index.ts";
import { formatIssue, loadSwarmConfig, missingScripts, type ResolvedSwarmConfig } from "../../swarm/index.ts";
import { loadTelemetry, type RunTelemetry } from "../../telemetry/index.ts";
import { ClaudeNotFoundError, locateClaude } from "../../worker/index.ts";
import type { RunOptions } from "./options.ts";

/** Where runs go by default; --resume looks here for the newest run of a config. */
export const RUNS_DIR = ".cadre/runs";

/** A run ready to start: its config, the earlier run it resumes or replays, where it writes, and on which Redis run. */
export interface PreparedRun {
  config: ResolvedSwarmConfig;
  plan: ResumePlan | undefined;
  replay: ReplayPlan | undefined;
  outDir: string;
  redis: { url: string; runId: string } | undefined;
}

async function loadConfig(options: RunOptions): Promise<ResolvedSwarmConfig | undefined> {
  const info = await stat(options.config).catch(() => undefined);
  if (info === undefined || !info.isFile()) {
    process.stderr.write(`cadre run: ${info === undefined ? "no such file" : "not a file"}: ${resolve(options.config)}\n`);
    return undefined;
  }
  const result = await loadSwarmConfig(options.config);
  const problems = result.ok
    ? options.rehearse
      ? missingScripts(result.config)
      : []
    : result.errors.map((item) => formatIssue(item, options.config));
  if (result.ok && problems.length === 0) return result.config;
  for (const line of problems) process.stderr.write(`${line}\n`);
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  process.stderr.write(`cadre run: ${options.config} is not valid${result.ok ? " for --rehearse" : ""} (${count})\n`);
  return undefined;
}

/** The run `options` ask for, or the exit code of what stops it before it starts (said on stderr). */
export async function prepareRun(options: RunOptions): Promise<PreparedRun | number> {
  let replay: ReplayPlan | undefined;
  if (options.replay) {
    const { dir, override, inPlace } = options.replay;
    try {
      replay = await planReplay(dir, { ...(options.config !== "" && { config: options.config }), overrides: override, inPlace });
    } catch (error) {
      if (!(error instanceof ReplayError)) throw error;
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 2;
    }
    // The swarm file given, else the recorded run's.
    options.config = replay.config;
  }
  const config = await loadConfig(options);
  if (config === undefined) {
    if (options.resume !== undefined)
      process.stderr.write(`cadre run: cannot resume ${options.resume || `the newest run of ${options.config}`}: the config must load first\n`);
    return 2;
  }
  let plan: ResumePlan | undefined;
  if (options.resume !== undefined) {
    try {
      plan = await planResume(config, { dir: options.resume || undefined, runsDir: resolve(RUNS_DIR), fresh: options.fresh });
    } catch (error) {
      if (!(error instanceof ResumeError)) throw error;
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 2;
    }
  }
  if (!claudeFound(options.redis !== undefined)) return 1;
  const { outDir, redis } = await placeRun(
    { outDir: options.outDir, defaultOut: options.defaultOut, redis: options.redis, runsDir: resolve(RUNS_DIR) },
    plan,
  );
  try {
    await prepareOutDir(outDir);
  } catch (error) {
    if (!(error instanceof RecordWriteError)) throw error;
    process.stderr.write(`cadre run: the output directory cannot be used: ${error.message}\n`);
    return 2;
  }
  return { config, plan, replay, outDir, redis };
}

/** The run's telemetry, when asked for: without OTEL_* settings or --otel no OpenTelemetry module loads. */
export async function startTelemetry(options: RunOptions, { config, plan }: PreparedRun): Promise<RunTelemetry | undefined> {
  if (!options.telemetry) return undefined;
  return (await loadTelemetry()).startRunTelemetry(
    options.telemetry,
    {
      swarm: config.name,
      tasks: config.tasks,
      distributed: options.redis !== undefined,
      concurrency: options.concurrency ?? config.concurrency,
      ...(plan?.previous.traces && { earlier: plan.previous.traces }),
    },
    (line) => process.stderr.write(`cadre run: ${line}\n`),
  );
}

/**
 * Every task run here needs claude: without one, says how to get it once, before anything starts.
 * With --redis the hosts run the tasks, with their own claude.
 */
export function claudeFound(onHosts: boolean): boolean {
  if (onHosts) return true;
  try {
    locateClaude();
    return true;
  } catch (error) {
    if (!(error instanceof ClaudeNotFoundError)) throw error;
    process.stderr.write(`cadre run: ${error.message}\n`);
    return false;
  }
}
