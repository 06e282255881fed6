import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import process from "node:process";
// Needs no Redis client: `cadre run` without --redis never loads BullMQ.
import { RUN_ID_PATTERN } from "../distributed/index.ts";
import { CadreError } from "../errors.ts";
import type { TaskInfo } from "../orchestrator/index.ts";
import {
  planReplay,
  planResume,
  prepareOutDir,
  RecordWriteError,
  ReplayError,
  type ReplayPlan,
  ResumeError,
  type ResumePlan,
  type RunEvent,
  RunModel,
  runDirWithId,
  SwarmRun,
} from "../run/index.ts";
import { formatIssue, loadSwarmConfig, missingScripts, type ResolvedSwarmConfig } from "../swarm/index.ts";
import { loadTelemetry } from "../telemetry/index.ts";
import { ClaudeNotFoundError, locateClaude } from "../worker/index.ts";
import { surviveClosedOutput } from "./output.ts";
import { openRunDashboard, type RunDashboard } from "./run/dashboard.ts";
import { renderFinalTable } from "./run/final-table.ts";
import { HELP, parseRunArgs, type RunOptions, USAGE } from "./run/options.ts";
import { colorsFor } from "./run/view/format.ts";
import { JsonView } from "./run/view/json.ts";
import { LinesView } from "./run/view/lines.ts";
import type { RunView } from "./run/view/view.ts";
import { SIGNAL_EXIT_CODES, type StopSignal, stopOnSignals, stopped } from "./signals.ts";

/** Where runs go by default; --resume looks here for the newest run of a config. */
const RUNS_DIR = ".cadre/runs";

/** The default run directory, made unique if a run in the same second already took it. */
async function freshDir(dir: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? dir : `${dir}-${n}`;
    if ((await stat(candidate).catch(() => undefined)) === undefined) return candidate;
  }
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

/** What the run says about itself, in a line every view shows: its record, or whether the model can be reached. */
function noticeOf(event: RunEvent): string | undefined {
  switch (event.type) {
    case "record_unwritten":
      return `${event.message}; the tasks go on, and each one that ends tries again`;
    case "record_written_again":
      return `${event.path} is written again`;
    case "access_waiting":
      return event.message;
    case "access_refused":
      return `stopped, no task can run: ${event.error.message}`;
    default:
      return undefined;
  }
}

/** `cadre run <config>`: runs the swarm, writes transcripts and summary.json, prints a final table. */
export async function runCommand(args: string[]): Promise<number> {
  const parsed = parseRunArgs(args);
  if (parsed.kind === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.kind === "error") {
    process.stderr.write(`cadre run: ${parsed.message}; ${USAGE}\n`);
    return 2;
  }
  const { options } = parsed;
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
    options.config = replay.config;
  }
  // A reader that goes away (`| head`) costs it the rest of the output, not the run nor its record.
  surviveClosedOutput((name) => {
    if (name === "stdout") process.stderr.write("cadre run: stdout was closed; the run goes on, and summary.json records it\n");
  });
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

  // Every task run here needs claude: without one, say how to get it once, before anything starts.
  // With --redis the hosts run the tasks, with their own claude.
  if (options.redis === undefined) {
    try {
      locateClaude();
    } catch (error) {
      if (!(error instanceof ClaudeNotFoundError)) throw error;
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 1;
    }
  }
  // A distributed run keeps one id: --resume goes on with the earlier run's, and --run-id of a run finds its directory.
  const earlierId = plan && !options.redis?.given && RUN_ID_PATTERN.test(plan.previous.run_id) ? plan.previous.run_id : undefined;
  const redis = options.redis && (earlierId ? { ...options.redis, runId: earlierId } : options.redis);
  const sameRunDir = options.redis?.given && options.defaultOut && !plan ? await runDirWithId(options.redis.runId, resolve(RUNS_DIR)) : undefined;
  const outDir = plan?.dir ?? sameRunDir ?? (options.defaultOut ? await freshDir(options.outDir) : options.outDir);
  try {
    await prepareOutDir(outDir);
  } catch (error) {
    if (!(error instanceof RecordWriteError)) throw error;
    process.stderr.write(`cadre run: the output directory cannot be used: ${error.message}\n`);
    return 2;
  }
  // Loaded only when asked for: without OTEL_* settings or --otel no OpenTelemetry module loads.
  const telemetry =
    options.telemetry &&
    (await (
      await loadTelemetry()
    ).startRunTelemetry(
      options.telemetry,
      {
        swarm: config.name,
        tasks: config.tasks,
        distributed: options.redis !== undefined,
        concurrency: options.concurrency ?? config.concurrency,
        ...(plan?.previous.traces && { earlier: plan.previous.traces }),
      },
      (line) => process.stderr.write(`cadre run: ${line}\n`),
    ));
  // Until the view is up, a distributed run's news goes to stderr.
  let notify = (line: string): void => {
    process.stderr.write(`cadre run: ${line}\n`);
  };
  let run: SwarmRun;
  try {
    run = await SwarmRun.start(config, {
      outDir,
      ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      rehearse: options.rehearse,
      rehearseBudget: options.rehearseBudget,
      ...(replay && { replay }),
      ...(redis && { redis: { url: redis.url, runId: redis.runId } }),
      ...(plan && { resume: plan }),
      notify: (line) => notify(line),
      ...(telemetry && { traceContext: (task: TaskInfo) => telemetry.traceContext(task), traceparent: telemetry.traceparent }),
    });
  } catch (error) {
    await telemetry?.finish(undefined);
    // Redis not there: one line, no hang (bad input was refused earlier). Anything else is unexpected (main.ts says so).
    if (!(error instanceof CadreError)) throw error;
    process.stderr.write(`cadre run: ${error.message}\n`);
    return 1;
  }
  telemetry?.begin({ runId: run.runId, attempt: run.attempt, rehearsal: run.rehearsal, description: run.description });

  const out = process.stdout;
  // The one read-model of the run: the terminal views and the dashboard read it.
  const state = new RunModel({
    title: config.name,
    mode: "swarm",
    tasks: config.tasks,
    startedAt: run.startedAt,
    budgetUsd: run.budgetUsd,
    costSimulated: run.rehearsal,
  });
  let dashboard: RunDashboard | undefined;
  if (options.ui) {
    try {
      dashboard = await openRunDashboard({
        address: options.ui,
        token: options.token,
        model: state,
        scheduler: run.scheduler,
        outDir,
      });
    } catch (error) {
      await run.close();
      await telemetry?.finish(undefined);
      process.stderr.write(`cadre run: ${(error as Error).message}\n`);
      return 2;
    }
    // Before the view draws: a terminal view redraws below this line and leaves it in place.
    (options.json ? process.stderr : out).write(`cadre run: dashboard at ${dashboard.serving.url}\n`);
  }
  const view: RunView = options.json
    ? new JsonView(out, process.stderr)
    : out.isTTY
      ? // Loaded only when used: the live view on a terminal.
        new (await import("./run/view/tty.ts")).TtyView(out, state, colorsFor(out))
      : new LinesView(out, state);

  const stopOf = (signal: StopSignal | undefined) => (signal === undefined ? undefined : { reason: signal, exitCode: SIGNAL_EXIT_CODES[signal] });
  const stopping = stopOnSignals("the run", {
    onStop: () => {
      state.interrupted = true;
      view.notice("interrupted: stopping the workers and writing what finished (Ctrl-C again to kill them)");
    },
    // The reaper kills each worker with its tools, also once this process has exited.
    onKill: () => {
      view.stop();
      const { summary, path, error } = run.kill(stopOf(stopping.received) ?? { reason: "killed", exitCode: 130 });
      process.stderr.write(`cadre run: killed; ${error ? error.message : `${path} lists what finished`}\n`);
      // The workers are dead already; the spans get a moment to leave (stopOnSignals bounds it).
      return telemetry?.finish(summary);
    },
  });

  notify = (line) => {
    view.notice(`cadre run: ${line}`);
  };
  view.notice(
    `cadre run: swarm "${config.name}", ${config.tasks.length} task${config.tasks.length === 1 ? "" : "s"}, ${run.description}, output in ${outDir}`,
  );
  if (plan) view.notice(`cadre run: resuming ${plan.dir} (attempt ${run.attempt})`);
  if (replay) view.notice(`cadre run: replaying run ${replay.of.run_id} (${replay.of.dir})`);
  for (const name of plan?.removed ?? [])
    view.notice(`cadre run: task "${name}" of the resumed run is no longer in the config; its result is dropped`);
  try {
    for await (const event of run.events(stopping.signal)) {
      const notice = noticeOf(event);
      if (notice !== undefined) view.notice(`cadre run: ${notice}`);
      if (event.type === "record_unwritten" || event.type === "record_written_again") continue;
      state.apply(event, Date.now());
      view.event(event);
      telemetry?.apply(event);
    }
  } finally {
    state.finishedAt = Date.now();
    view.stop();
  }
  stopping.dispose();

  const { summary, path, error } = run.writeRecord(stopOf(stopping.received) ?? run.stop);
  await telemetry?.finish(summary);
  const tableOut = options.json ? process.stderr : out;
  const table = renderFinalTable(summary, { width: tableOut.columns ?? 120, colors: colorsFor(tableOut) });
  tableOut.write(
    `\n${table}\n\n${error ? `summary: not written (${error.message}); the transcripts that could be written are in ${outDir}` : `summary: ${path}`}\n`,
  );
  for (const warning of run.warnings()) process.stderr.write(`cadre run: ${warning}\n`);
  const divergences = run.divergences();
  for (const divergence of divergences) process.stderr.write(`cadre run: ${divergence.message}\n`);
  if (dashboard) {
    dashboard.live.finish(Date.now(), { record: summary, dir: outDir });
    // A person is watching: the page stays to be read, unless they stopped the run themselves.
    if (stopping.received === undefined) {
      process.stderr.write(`cadre run: the dashboard stays open at ${dashboard.serving.url} until Ctrl-C\n`);
      const leaving = stopOnSignals("the dashboard");
      await stopped(leaving.signal);
      leaving.dispose();
    }
    await dashboard.serving.close();
  }
  // The tasks may all have succeeded, but a record that is not there needs fixing.
  // A replay that left its record failed, even where its tasks succeeded.
  return (error || divergences.length > 0) && summary.exit_code === 0 ? 1 : summary.exit_code;
}
