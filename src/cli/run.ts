// `cadre run <swarm file | script>`: parses its flags, renders the run on the terminal (and the dashboard), and turns signals into a stop.
import process from "node:process";
import { CadreError } from "../errors.ts";
import type { TaskInfo } from "../orchestrator/index.ts";
import { ControlSocket, type RunEvent, RunModel, type RunStop, SwarmRun, startWorkflowRun } from "../run/index.ts";
import type { RunTelemetry } from "../telemetry/index.ts";
import { printable } from "../util/one-line.ts";
import { surviveClosedOutput } from "./output.ts";
import { openRunDashboard, type RunDashboard } from "./run/dashboard.ts";
import { finishRun } from "./run/finish.ts";
import { HELP, parseRunArgs, type RunOptions, USAGE } from "./run/options.ts";
import { type PreparedRun, prepareRun, startTelemetry } from "./run/prepare.ts";
import { resumeNotice, scriptLine } from "./run/script.ts";
import { colorsFor } from "./run/view/format.ts";
import { JsonView } from "./run/view/json.ts";
import { LinesView } from "./run/view/lines.ts";
import type { RunView } from "./run/view/view.ts";
import { SIGNAL_EXIT_CODES, type StopSignal, stopOnSignals } from "./signals.ts";

/** What the run says about itself, in a line every view shows: its record, whether the model can be reached, a script's phases and logs. */
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
      return scriptLine(event);
  }
}

/** `cadre run <file>`: runs the swarm or the script, writes transcripts and summary.json, prints a final table. */
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
  // A reader that goes away (`| head`) costs it the rest of the output, not the run nor its record.
  surviveClosedOutput((name) => {
    if (name === "stdout") process.stderr.write("cadre run: stdout was closed; the run goes on, and summary.json records it\n");
  });
  const prepared = await prepareRun(options);
  if (typeof prepared === "number") return prepared;
  const telemetry = await startTelemetry(options, prepared);
  // Until the view is up, a distributed run's news goes to stderr.
  let notify = (line: string): void => {
    process.stderr.write(`cadre run: ${printable(line)}\n`);
  };
  const run = await startRun(options, prepared, telemetry, (line) => notify(line));
  if (typeof run === "number") return run;
  telemetry?.begin({ runId: run.runId, attempt: run.attempt, rehearsal: run.rehearsal, description: run.description });
  const state = modelOf(run);
  const dashboard = await openDashboard(options, run, state, prepared.outDir);
  if (dashboard === false) {
    await run.close();
    await telemetry?.finish(undefined);
    return 2;
  }
  const view = await viewFor(options, state);
  notify = (line) => view.notice(`cadre run: ${line}`);
  return watchRun({ options, prepared, run, state, view, telemetry, dashboard });
}

/** The one read-model of the run: the terminal views and the dashboard read it. */
function modelOf(run: SwarmRun): RunModel {
  return new RunModel({
    title: run.config.name,
    mode: "swarm",
    tasks: run.config.tasks,
    startedAt: run.startedAt,
    budgetUsd: run.budgetUsd,
    agentBudgets: Object.fromEntries(Object.entries(run.config.agents).map(([name, agent]) => [name, agent.budget_usd])),
    costSimulated: run.rehearsal,
  });
}

interface Watched {
  options: RunOptions;
  prepared: PreparedRun;
  run: SwarmRun;
  state: RunModel;
  view: RunView;
  telemetry: RunTelemetry | undefined;
  dashboard: RunDashboard | undefined;
}

/** Shows the run as it goes until it ends (a first signal stops it, a second kills it), then writes its record and says how it ended. */
async function watchRun({ options, prepared, run, state, view, telemetry, dashboard }: Watched): Promise<number> {
  const stopOf = (signal: StopSignal | undefined): RunStop | undefined =>
    signal === undefined ? undefined : { reason: signal, exitCode: SIGNAL_EXIT_CODES[signal] };
  const stopping = stopOnSignals("the run", {
    onStop: () => {
      state.interrupted = true;
      view.notice("interrupted: stopping the workers and writing what finished (Ctrl-C again to kill them)");
    },
    // The reaper kills each worker with its tools, also once this process has exited.
    onKill: () => {
      view.stop();
      const { summary, path, error } = run.kill(stopOf(stopping.received) ?? { reason: "killed", exitCode: 130 });
      process.stderr.write(`cadre run: killed; ${error ? printable(error.message) : `${path} lists what finished`}\n`);
      // The workers are dead already; the spans get a moment to leave (stopOnSignals bounds it).
      return telemetry?.finish(summary);
    },
  });
  for (const line of startLines(options, prepared, run)) view.notice(`cadre run: ${line}`);
  const control = await openControlSocket(run, prepared.outDir, view);
  try {
    for await (const event of run.events(stopping.signal)) {
      const notice = noticeOf(event);
      if (notice !== undefined) view.notice(event.type.startsWith("record_") || event.type.startsWith("access_") ? `cadre run: ${notice}` : notice);
      if (event.type === "record_unwritten" || event.type === "record_written_again") continue;
      state.apply(event, Date.now());
      view.event(event);
      telemetry?.apply(event);
    }
  } finally {
    state.finishedAt = Date.now();
    await control?.close();
    view.stop();
  }
  stopping.dispose();
  const stoppedByUser = stopping.received !== undefined;
  return finishRun(run, stopOf(stopping.received) ?? run.stop, options, { outDir: prepared.outDir, telemetry, dashboard, stoppedByUser });
}

/** The socket `cadre send|stop|interrupt` reach the run through; without one (a path too long), the run goes on and says so. */
async function openControlSocket(run: SwarmRun, outDir: string, view: RunView): Promise<ControlSocket | undefined> {
  try {
    return await ControlSocket.open(outDir, run);
  } catch (error) {
    if (!(error instanceof CadreError)) throw error;
    view.notice(`cadre run: ${error.message}`);
    return undefined;
  }
}

/** What the run says as it starts: what runs, where, and what it resumes or replays. */
function startLines(options: RunOptions, prepared: PreparedRun, run: SwarmRun): string[] {
  const { plan, outDir } = prepared;
  const what =
    prepared.kind === "script"
      ? `workflow script "${run.config.name}"`
      : `swarm "${run.config.name}", ${run.config.tasks.length} task${run.config.tasks.length === 1 ? "" : "s"}`;
  const replayed = prepared.kind === "script" ? prepared.script.replay : prepared.replay;
  const removed = prepared.kind === "swarm" ? (plan?.removed ?? []) : [];
  return [
    `${what}, ${run.description}, output in ${outDir}`,
    ...(plan ? [`resuming ${plan.dir} (attempt ${run.attempt})`, ...plan.unreadable.map((line) => `${line}; the rest of the record was read`)] : []),
    ...(prepared.kind === "script" ? [resumeNotice(prepared.script, options)].filter((line) => line !== undefined) : []),
    ...(replayed ? [`replaying run ${replayed.of.run_id} (${replayed.of.dir})`] : []),
    ...removed.map((name) => `task "${name}" of the resumed run is no longer in the config; its result is dropped`),
  ];
}

/** Starts the run's engine, or says in one line why it cannot start (a Redis that cannot be reached) and gives exit code 1. */
async function startRun(
  options: RunOptions,
  prepared: PreparedRun,
  telemetry: RunTelemetry | undefined,
  notify: (line: string) => void,
): Promise<SwarmRun | number> {
  const traced = telemetry && { traceContext: (task: TaskInfo) => telemetry.traceContext(task), traceparent: telemetry.traceparent };
  try {
    return prepared.kind === "script" ? await startScript(options, prepared, traced) : await startSwarm(options, prepared, notify, traced);
  } catch (error) {
    await telemetry?.finish(undefined);
    // Redis not there: one line, no hang (bad input was refused earlier). Anything else is unexpected (main.ts says so).
    if (!(error instanceof CadreError)) throw error;
    process.stderr.write(`cadre run: ${printable(error.message)}\n`);
    return 1;
  }
}

type Traced = { traceContext: (task: TaskInfo) => string | undefined; traceparent: string | undefined } | undefined;

function startSwarm(options: RunOptions, prepared: Extract<PreparedRun, { kind: "swarm" }>, notify: (line: string) => void, traced: Traced) {
  const { config, plan, replay, outDir, redis } = prepared;
  return SwarmRun.start(config, {
    outDir,
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    rehearse: options.rehearse,
    rehearseBudget: options.rehearseBudget,
    ...(replay && { replay }),
    ...(redis && { redis }),
    ...(plan && { resume: plan }),
    notify,
    ...(traced?.traceparent !== undefined && { traceparent: traced.traceparent }),
    ...(traced && { traceContext: traced.traceContext }),
  });
}

async function startScript(options: RunOptions, prepared: Extract<PreparedRun, { kind: "script" }>, traced: Traced): Promise<SwarmRun> {
  const { script, outDir, redis } = prepared;
  const { replay } = script;
  // Given here, else as the replayed run had them (a resumed run keeps its own: startWorkflowRun).
  const limits = {
    budgetTokens: options.script.budgetTokens ?? replay?.budgetTokens,
    budgetUsd: options.script.budgetUsd ?? replay?.budgetUsd,
    maxAgents: options.script.maxAgents ?? replay?.maxAgents,
  };
  const { run } = await startWorkflowRun(script.source, {
    outDir,
    file: script.file,
    ...(script.args !== undefined && { args: script.args }),
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined)),
    sessionFiles: options.script.sessionFiles,
    ...(script.rehearsal && { rehearsal: script.rehearsal }),
    ...(script.resume && { resume: script.resume }),
    ...(script.claudeCode && { claudeCode: script.claudeCode }),
    ...(redis && { redis }),
    ...(replay && { replay }),
    ...(traced?.traceparent !== undefined && { traceparent: traced.traceparent }),
    ...(traced && { traceContext: traced.traceContext }),
  });
  return run;
}

/** The dashboard, with --ui; false when it cannot open (said on stderr). */
async function openDashboard(options: RunOptions, run: SwarmRun, model: RunModel, outDir: string): Promise<RunDashboard | undefined | false> {
  if (!options.ui) return undefined;
  let dashboard: RunDashboard;
  try {
    dashboard = await openRunDashboard({ address: options.ui, token: options.token, model, scheduler: run.scheduler, outDir, steer: run });
  } catch (error) {
    process.stderr.write(`cadre run: ${(error as Error).message}\n`);
    return false;
  }
  // Before the view draws: a terminal view redraws below this line and leaves it in place.
  (options.json ? process.stderr : process.stdout).write(`cadre run: dashboard at ${dashboard.serving.url}\n`);
  return dashboard;
}

/** The terminal view: JSON lines, the live view on a terminal (loaded only then), or plain lines. */
async function viewFor(options: RunOptions, state: RunModel): Promise<RunView> {
  const out = process.stdout;
  if (options.json) return new JsonView(out, process.stderr);
  return out.isTTY ? new (await import("./run/view/tty.ts")).TtyView(out, state, colorsFor(out)) : new LinesView(out, state);
}
