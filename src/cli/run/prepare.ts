// What `cadre run` settles before anything starts: the kind of plan, the run to replay, the file, the run to resume, claude, the run directory, telemetry.
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import process from "node:process";
import { CadreError } from "../../errors.ts";
import {
  isWorkflowRecord,
  placeRun,
  planReplay,
  planResume,
  prepareOutDir,
  RecordWriteError,
  ReplayError,
  type ReplayPlan,
  ResumeError,
  type ResumePlan,
  runListens,
} from "../../run/index.ts";
import { formatIssue, loadSwarmConfig, missingScripts, type ResolvedSwarmConfig } from "../../swarm/index.ts";
import { loadTelemetry, type RunTelemetry } from "../../telemetry/index.ts";
import { ClaudeNotFoundError, locateClaude } from "../../worker/index.ts";
import type { RunOptions } from "./options.ts";
import { type PreparedScript, prepareScript } from "./script.ts";

/** Where runs go by default; --resume looks here for the newest run of a config. */
export const RUNS_DIR = ".cadre/runs";

/** Where a run writes, and on which Redis run. */
interface Placed {
  outDir: string;
  redis: { url: string; runId: string } | undefined;
}

/** A run ready to start: a swarm file's config or a workflow script, the earlier run it resumes or replays, where it writes. */
export type PreparedRun =
  | (Placed & { kind: "swarm"; config: ResolvedSwarmConfig; plan: ResumePlan | undefined; replay: ReplayPlan | undefined })
  | (Placed & { kind: "script"; script: PreparedScript; plan: ResumePlan | undefined });

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
  // A replay without a file is of whatever the recorded run ran.
  options.kind ??= options.replay && (await isWorkflowRecord(options.replay.dir)) ? "script" : "swarm";
  if (options.kind === "script") return prepareScriptRun(options);
  return prepareSwarmRun(options);
}

/** A workflow script's run: the script refused before launch, a missing resume or replay, bad args exit 2 before any model request. */
async function prepareScriptRun(options: RunOptions): Promise<PreparedRun | number> {
  let script: PreparedScript;
  try {
    script = await prepareScript(options, resolve(RUNS_DIR));
  } catch (error) {
    if (!(error instanceof CadreError)) throw error;
    process.stderr.write(`cadre run: ${error.message}\n`);
    return 2;
  }
  if (!claudeFound(options.redis !== undefined)) return 1;
  const placed = await placeOrRefuse(options, script.resume);
  return typeof placed === "number" ? placed : { kind: "script", script, plan: script.resume, ...placed };
}

async function prepareSwarmRun(options: RunOptions): Promise<PreparedRun | number> {
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
  const placed = await placeOrRefuse(options, plan);
  return typeof placed === "number" ? placed : { kind: "swarm", config, plan, replay, ...placed };
}

/** Where the run writes (made and checked), and on which Redis run; exit 2 when the directory cannot be used. */
async function placeOrRefuse(options: RunOptions, plan: ResumePlan | undefined): Promise<Placed | number> {
  // Two runs in one directory would write one record, and the second would take the first's socket.
  if (plan !== undefined && (await runListens(plan.dir))) {
    process.stderr.write(`cadre run: cannot resume ${plan.dir}: its run is still going (its control socket answers); stop it first\n`);
    return 2;
  }
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
  return { outDir, redis };
}

/** The run's telemetry, when asked for: without OTEL_* settings or --otel no OpenTelemetry module loads. */
export async function startTelemetry(options: RunOptions, prepared: PreparedRun): Promise<RunTelemetry | undefined> {
  if (!options.telemetry) return undefined;
  const { plan } = prepared;
  const meta = prepared.kind === "script" ? prepared.script.checked.meta : undefined;
  return (await loadTelemetry()).startRunTelemetry(
    options.telemetry,
    {
      swarm: meta?.name ?? (prepared.kind === "swarm" ? prepared.config.name : ""),
      tasks: prepared.kind === "swarm" ? prepared.config.tasks : [],
      ...(meta && { workflow: { description: meta.description } }),
      distributed: options.redis !== undefined,
      concurrency: options.concurrency ?? (prepared.kind === "swarm" ? prepared.config.concurrency : undefined),
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
