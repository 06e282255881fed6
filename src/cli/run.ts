import { writeFileSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import process from "node:process";
import { Orchestrator, type TaskResult } from "../orchestrator/index.ts";
import { type RehearsalRig, startRehearsalRig } from "../rehearsal/index.ts";
import { loadSwarmConfig, orchestratorOptionsFor, type ResolvedSwarmConfig } from "../swarm/config/index.ts";
import { formatIssue } from "../swarm/config/issues.ts";
import { missingScripts } from "../swarm/rehearsal.ts";
import { INTERRUPTED, runSwarm, unrunResult } from "../swarm/runner.ts";
import { openRunDashboard, type RunDashboard } from "./run/dashboard.ts";
import { HELP, parseRunArgs, type RunOptions, USAGE } from "./run/options.ts";
import { interruptOnSignals } from "./run/signals.ts";
import { type RunEvent, RunState } from "./run/state.ts";
import { buildSummary, renderFinalTable, SUMMARY_FILE, type Summary, writeSummary } from "./run/summary.ts";
import { colorsFor } from "./run/view/format.ts";
import { JsonView } from "./run/view/json.ts";
import { LinesView } from "./run/view/lines.ts";
import { TtyView } from "./run/view/tty.ts";
import type { RunView } from "./run/view/view.ts";
import { stopped, stopSignal } from "./stop.ts";

/** Where the task transcripts go inside the run directory, beside summary.json. */
const TRANSCRIPTS_DIR = "transcripts";

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
  const config = await loadConfig(options);
  if (config === undefined) return 2;

  const outDir = options.defaultOut ? await freshDir(options.outDir) : options.outDir;
  await mkdir(outDir, { recursive: true });
  const rig: RehearsalRig | undefined = options.rehearse ? await startRehearsalRig(config.rehearsal) : undefined;
  const base = orchestratorOptionsFor(config);
  const orchestrator = new Orchestrator({
    ...base,
    concurrency: options.concurrency ?? base.concurrency,
    outDir: join(outDir, TRANSCRIPTS_DIR),
    ...(rig && { workerOptions: rig.workerOptions }),
  });

  const startedAt = Date.now();
  const out = process.stdout;
  let dashboard: RunDashboard | undefined;
  if (options.ui) {
    try {
      dashboard = await openRunDashboard({ address: options.ui, token: options.token, config, orchestrator, outDir, startedAt });
    } catch (error) {
      await orchestrator.close();
      await rig?.close();
      process.stderr.write(`cadre run: ${(error as Error).message}\n`);
      return 2;
    }
    // Before the view draws: a terminal view redraws below this line and leaves it in place.
    (options.json ? process.stderr : out).write(`cadre run: dashboard at ${dashboard.serving.url}\n`);
  }
  const state = new RunState(config.name, config.tasks, startedAt, config.budget_usd);
  const view: RunView = options.json
    ? new JsonView(out, process.stderr)
    : out.isTTY
      ? new TtyView(out, state, colorsFor(out))
      : new LinesView(out, state);
  const results = new Map<string, TaskResult>();
  const onEvent = (event: RunEvent) => {
    const now = Date.now();
    state.apply(event, now);
    dashboard?.live.apply(event, now);
    view.event(event);
  };
  orchestrator.on(onEvent);

  const summaryOf = (finishedAt: number, interrupted: boolean): Summary =>
    buildSummary({
      config,
      results,
      totals: orchestrator.totals,
      transcripts: orchestrator.transcriptPaths,
      outDir,
      rehearsal: options.rehearse,
      startedAt,
      finishedAt,
      interrupted,
    });
  const signals = interruptOnSignals({
    onInterrupt: () => {
      state.interrupted = true;
      view.notice("interrupted: stopping the workers and writing what finished (Ctrl-C again to kill them)");
    },
    onKill: () => {
      view.stop();
      orchestrator.kill();
      for (const task of config.tasks) {
        if (!results.has(task.name))
          results.set(task.name, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "killed by a second Ctrl-C" }));
      }
      writeFileSync(join(outDir, SUMMARY_FILE), `${JSON.stringify(summaryOf(Date.now(), true), null, 2)}\n`);
      process.stderr.write(`cadre run: killed; ${join(outDir, SUMMARY_FILE)} lists what finished\n`);
    },
  });

  const mode = options.rehearse ? "rehearsal (scripted model, offline)" : "live";
  view.notice(`cadre run: swarm "${config.name}", ${config.tasks.length} task${config.tasks.length === 1 ? "" : "s"}, ${mode}, output in ${outDir}`);
  try {
    for await (const event of runSwarm({ config, orchestrator, signal: signals.signal })) {
      results.set(event.task.name, event.result);
      onEvent(event);
    }
  } finally {
    // Every worker, peer and supervisor process ends here, and the transcripts are flushed.
    await orchestrator.close();
    state.finishedAt = Date.now();
    view.stop();
    await rig?.close();
  }
  const interrupted = signals.signal.aborted;
  signals.dispose();

  const summary = summaryOf(state.finishedAt, interrupted);
  const path = await writeSummary(outDir, summary);
  const tableOut = options.json ? process.stderr : out;
  tableOut.write(`\n${renderFinalTable(summary, { width: tableOut.columns ?? 120, colors: colorsFor(tableOut) })}\n\nsummary: ${path}\n`);
  for (const warning of rig?.server.warnings ?? []) process.stderr.write(`cadre run: ${warning}\n`);
  if (dashboard) {
    dashboard.live.finish(Date.now(), { record: summary, dir: outDir });
    // A person is watching: the page stays to be read, unless they stopped the run themselves.
    if (!interrupted) {
      process.stderr.write(`cadre run: the dashboard stays open at ${dashboard.serving.url} until Ctrl-C\n`);
      await stopped(stopSignal());
    }
    await dashboard.serving.close();
  }
  return summary.exit_code;
}
