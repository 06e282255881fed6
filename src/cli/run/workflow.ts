/**
 * `cadre run script.js` and `cadre run --workflow NAME`: a workflow script
 * (Claude Code's dynamic-workflow dialect) on cadre's engine. Flags, the
 * terminal lines grouped by phase, `--json` events, exit codes; the run itself
 * is the run layer's (runWorkflow).
 */
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { redisUrlProblem } from "../../distributed/index.ts";
import { CadreError } from "../../errors.ts";
import type { RehearsalScripts } from "../../rehearsal/index.ts";
import {
  isWorkflowRecord,
  latestRunOf,
  planWorkflowReplay,
  RecordWriteError,
  ReplayError,
  ResumeError,
  runWorkflow,
  type WorkflowReplayPlan,
  type WorkflowRunEvent,
  type WorkflowRunResult,
} from "../../run/index.ts";
import { loadTelemetry, type TelemetrySettings, telemetryHelp, telemetrySettings, type WorkflowTelemetry } from "../../telemetry/index.ts";
import { parseHostPort } from "../../util/http-guard.ts";
import { checkWorkflowScript, findSavedWorkflow, WorkflowScriptError } from "../../workflow/index.ts";
import { checkServerToken, numberFlag, parseFlags } from "../flags.ts";
import { SIGNAL_EXIT_CODES, stopOnSignals } from "../signals.ts";
import { OPTIONAL_UI, runDirName, withOptionalValues } from "./options.ts";
import { claudeFound, RUNS_DIR } from "./prepare.ts";
import { WorkflowDashboard } from "./workflow-dashboard.ts";

export const WORKFLOW_USAGE =
  "usage: cadre run <script.js> | --workflow NAME [--args JSON|@file.json] [--budget TOKENS] [--budget-usd USD] [--max-agents N] [--concurrency N] [--session-files] [--out DIR | --resume [RUN-DIR]] [--rehearse] [--json] [--redis URL] [--ui [HOST:PORT]] [--otel [--otel-content]] [--replay RUN-DIR [--override FILE] [--in-place]]";

export const WORKFLOW_HELP = `${WORKFLOW_USAGE}

Runs a workflow script written for Claude Code (\`export const meta = {…}\`, then
agent(), parallel(), pipeline(), phase(), log(), budget, workflow(), args) on
cadre's engine: every agent() call is a claude worker under cadre's limits.

Options:
  --workflow NAME      run the saved workflow .claude/workflows/NAME.js (the project's, else ~/.claude's)
  --args JSON|@FILE    the script's \`args\`, as JSON text or from a JSON file
  --budget TOKENS      budget.total, in output tokens (500k, 2m or a number): agent() throws once spent
  --budget-usd USD     the run's dollar budget (budget_usd): budget.usd.remaining() says what is left, and
                       agent() throws once it is spent (with --rehearse: of the simulated costs)
  --max-agents N       agent() calls per run, nested workflows' included (default 1000)
  -c, --concurrency N  workers running at once (default: chosen by cadre)
  --session-files      let the agents' claude processes keep their session files, for \`claude --resume
                       <session_id>\` (default: off; cadre keeps every agent's transcript in the record)
  -o, --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]       go on with an earlier run of the script (default: its newest under .cadre/runs):
                       agent() calls replay from its record up to the first that changed or failed
  --rehearse           play scripted replies on a built-in scripted model, offline: the scripts, by
                       agent label, are in <script>.rehearsal.yaml (or .json) beside the script
  --json               print the run's events as NDJSON on stdout
  --redis URL          run the agents on the hosts that serve this Redis; the script runs here
  --replay RUN-DIR     replay that run (cadre replay RUN-DIR): its script (the copy it kept, unless a
                       script is given), args, budgets and limit, with the real claude against its
                       recorded replies; offline, no cost. Agents work here, for real: use a test
                       checkout (docs/replay.md). A divergence from the record exits 1
  --override FILE      with --replay: replies to give instead of recorded ones (agent row → turn → reply)
  --in-place           with --replay: run even in the working tree the recorded run worked in
  --ui [HOST:PORT]     serve a live web dashboard of the run (default 127.0.0.1 and a free port): a row
                       per agent() call with its phase, and the script's result; it stays open after the
                       run until Ctrl-C
  --token T            the dashboard's token (or CADRE_UI_TOKEN); generated when absent
${telemetryHelp(23)}
  -h, --help           show this help

Exit status: 0 the script returned, 1 it threw or hit a limit, 2 the script was refused before
launch or the arguments are wrong; 129, 130, 143 stopped by a signal (the record is still written).
`;

/** Whether `cadre run` was given a workflow script rather than a swarm file. */
export function isWorkflowRun(args: string[]): boolean {
  return (
    args.includes("--workflow") ||
    args.some((arg) => arg.startsWith("--workflow=")) ||
    args.some((arg) => /\.(m?js)$/i.test(arg) && !arg.startsWith("-"))
  );
}

/** Whether `cadre run --replay RUN-DIR` replays a workflow script's run (the run directory says so), rather than a swarm's. */
export async function replaysWorkflowRun(args: string[]): Promise<boolean> {
  const at = args.findIndex((arg) => arg === "--replay" || arg.startsWith("--replay="));
  if (at === -1) return false;
  const dir = args[at]!.startsWith("--replay=") ? args[at]!.slice("--replay=".length) : args[at + 1];
  return dir !== undefined && !dir.startsWith("-") && (await isWorkflowRecord(dir));
}

/** "500k", "2m", "1.5m" or a plain number of tokens. */
function tokens(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (match === null) throw new CadreError("USAGE", `--budget wants a number of output tokens such as 500k or 2m, got "${value}"`);
  return Math.round(Number(match[1]) * ({ k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as "k" | "m"] ?? 1));
}

/** A positive number of dollars ("2", "0.5", "$2"). */
function dollars(value: string | undefined): number | undefined {
  const usd = numberFlag("budget-usd", value?.trim().replace(/^\$/, ""));
  if (usd === 0) throw new CadreError("USAGE", `--budget-usd wants a number of dollars above 0, got "${value}"`);
  return usd;
}

async function argsOf(value: string | undefined): Promise<unknown> {
  if (value === undefined) return undefined;
  const text = value.startsWith("@") ? await readFile(resolve(value.slice(1)), "utf8") : value;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new CadreError("USAGE", `--args wants JSON (or @file.json): ${(cause as Error).message}`, { cause });
  }
}

/** The scripted replies beside a script: NAME.rehearsal.yaml, .yml or .json. */
async function rehearsalBeside(file: string): Promise<RehearsalScripts> {
  const stem = join(dirname(file), basename(file).replace(/\.m?js$/i, ""));
  for (const candidate of [`${stem}.rehearsal.yaml`, `${stem}.rehearsal.yml`, `${stem}.rehearsal.json`]) {
    const text = await readFile(candidate, "utf8").catch(() => undefined);
    // Loaded only for --rehearse, as the swarm's rehearsal is.
    if (text !== undefined) return (await import("../../rehearsal/script.ts")).loadRehearsalScripts(text);
  }
  throw new CadreError("USAGE", `--rehearse: no scripted replies beside ${file} (write them, by agent label, in ${stem}.rehearsal.yaml)`);
}

/** One line per event, grouped under each phase as it starts. */
function lineView(write: (line: string) => void): (event: WorkflowRunEvent) => void {
  let shownPhase: string | undefined;
  return (event) => {
    switch (event.type) {
      case "workflow_started":
        write(`workflow ${event.meta.name}: ${event.meta.description}`);
        return;
      case "workflow_phase":
        if (event.title !== shownPhase) write(`▸ ${event.workflow ? `${event.workflow} › ` : ""}${event.title}`);
        shownPhase = event.title;
        return;
      case "workflow_log":
        write(`  · ${event.message}`);
        return;
      case "agent_started":
        if (event.call.phase !== shownPhase && event.call.phase !== undefined) write(`▸ ${event.call.phase}`);
        shownPhase = event.call.phase ?? shownPhase;
        if (!event.replayed) write(`  … ${event.call.label}`);
        return;
      case "agent_ended": {
        const mark = event.replayed ? "↺" : event.status === "succeeded" ? "✓" : "✗";
        const cost = event.result ? ` $${event.result.costUsd.toFixed(4)}` : "";
        const why = event.error?.message ?? event.result?.error?.message;
        write(`  ${mark} ${event.call.label}${event.replayed ? " (from the record)" : ` ${event.status}${cost}`}${why ? `: ${why}` : ""}`);
        return;
      }
      case "workflow_ended":
        return;
    }
  };
}

/** The agents by phase, in the order their phases first came, then the result and the record. */
function finalLines(result: WorkflowRunResult): string[] {
  const { outcome, summary, path } = result;
  const phases = new Map<string, string[]>();
  for (const row of summary.tasks) {
    const phase = typeof row.phase === "string" ? row.phase : "(no phase)";
    const mark = row.carried_over ? "↺" : row.status === "succeeded" ? "✓" : "✗";
    phases.set(phase, [...(phases.get(phase) ?? []), `${mark} ${String(row.label ?? row.name)}`]);
  }
  const lines = [
    ...[...phases].map(([phase, agents]) => `${phase}: ${agents.join("  ")}`),
    outcome.ok ? `result: ${JSON.stringify(outcome.result ?? null)?.slice(0, 2_000)}` : `error: ${outcome.error?.message}`,
    `${outcome.agentCount} agents, $${summary.totals.cost_usd.toFixed(4)}${summary.rehearsal ? " (simulated)" : ""}, ${outcome.outputTokens} output tokens; record: ${path}`,
  ];
  return lines;
}

export async function runWorkflowCommand(args: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const resumeAlone = args.map((arg, i) =>
      arg === "--resume" && (args[i + 1] === undefined || args[i + 1]!.startsWith("-") || /\.m?js$/i.test(args[i + 1]!)) ? "--resume=" : arg,
    );
    ({ values, positionals } = parseFlags(withOptionalValues(resumeAlone, OPTIONAL_UI), {
      options: {
        workflow: { type: "string" },
        args: { type: "string" },
        budget: { type: "string" },
        "budget-usd": { type: "string" },
        "max-agents": { type: "string" },
        concurrency: { type: "string", short: "c" },
        "session-files": { type: "boolean" },
        out: { type: "string", short: "o" },
        resume: { type: "string" },
        rehearse: { type: "boolean" },
        json: { type: "boolean" },
        redis: { type: "string" },
        replay: { type: "string" },
        override: { type: "string" },
        "in-place": { type: "boolean" },
        otel: { type: "boolean" },
        "otel-content": { type: "boolean" },
        ui: { type: "string" },
        token: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    process.stderr.write(`cadre run: ${(error as Error).message}; ${WORKFLOW_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(WORKFLOW_HELP);
    return 0;
  }
  const usage = (message: string) => {
    process.stderr.write(`cadre run: ${message}; ${WORKFLOW_USAGE}\n`);
    return 2;
  };
  const name = values.workflow as string | undefined;
  const replayDir = values.replay as string | undefined;
  if ((values.override !== undefined || values["in-place"]) && replayDir === undefined)
    return usage(`--${values.override !== undefined ? "override" : "in-place"} goes with --replay`);
  if (replayDir !== undefined && (values.rehearse || values.redis !== undefined || values.resume !== undefined || name !== undefined))
    return usage("--replay runs here against the recorded replies: leave out --rehearse, --redis, --resume and --workflow");
  if (replayDir === undefined && (name === undefined) === (positionals.length === 0)) return usage("give one workflow script, or --workflow NAME");
  if (positionals.length > 1) return usage(`give one workflow script (also got "${positionals.slice(1).join('", "')}")`);
  if (values.resume !== undefined && values.out !== undefined) return usage("--resume writes into the run it resumes; leave out --out");
  const redisProblem = typeof values.redis === "string" ? redisUrlProblem(values.redis) : undefined;
  if (redisProblem) return usage(`--redis: ${redisProblem}`);
  let telemetry: TelemetrySettings | undefined;
  let address: { host: string; port: number } | undefined;
  const token = (values.token as string | undefined) ?? process.env.CADRE_UI_TOKEN;
  if (values.token !== undefined && values.ui === undefined) return usage("--token goes with --ui");
  try {
    telemetry = telemetrySettings({ otel: values.otel === true, content: values["otel-content"] === true });
    address = values.ui === undefined ? undefined : parseHostPort(values.ui as string, "--ui");
    if (address) checkServerToken(address.host, token, "read the run");
  } catch (error) {
    if (!(error instanceof CadreError)) throw error;
    return usage(error.message);
  }

  let file: string;
  let source: string;
  let options: Awaited<ReturnType<typeof settings>>;
  let replay: WorkflowReplayPlan | undefined;
  async function settings() {
    return {
      args: await argsOf(values.args as string | undefined),
      budgetTokens: tokens(values.budget as string | undefined),
      budgetUsd: dollars(values["budget-usd"] as string | undefined),
      maxAgents: numberFlag("max-agents", values["max-agents"] as string | undefined, { integer: true, min: 1 }),
      concurrency: numberFlag("concurrency", values.concurrency as string | undefined, { integer: true, min: 1 }),
      sessionFiles: values["session-files"] === true,
    };
  }
  try {
    options = await settings();
    if (replayDir !== undefined) {
      replay = await planWorkflowReplay(replayDir, {
        ...(positionals[0] !== undefined && { script: positionals[0] }),
        ...(values.args !== undefined && { args: options.args }),
        ...(values.override !== undefined && { overrides: values.override as string }),
        inPlace: values["in-place"] === true,
      });
      file = replay.file;
      source = replay.source;
      // What the recorded run was given, unless given again here.
      options = {
        ...options,
        args: replay.args,
        budgetTokens: options.budgetTokens ?? replay.budgetTokens,
        budgetUsd: options.budgetUsd ?? replay.budgetUsd,
        maxAgents: options.maxAgents ?? replay.maxAgents,
      };
    } else if (name !== undefined) {
      const found = await findSavedWorkflow(name);
      file = found.file;
      source = found.source;
    } else {
      file = resolve(positionals[0]!);
      const info = await stat(file).catch(() => undefined);
      if (info === undefined || !info.isFile()) {
        process.stderr.write(`cadre run: ${info === undefined ? "no such file" : "not a file"}: ${file}\n`);
        return 2;
      }
      source = await readFile(file, "utf8");
    }
  } catch (error) {
    if (error instanceof ReplayError) {
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 2;
    }
    if (!(error instanceof CadreError)) throw error;
    return usage(error.message);
  }

  let rehearsal: RehearsalScripts | undefined;
  try {
    rehearsal = values.rehearse ? await rehearsalBeside(file) : undefined;
  } catch (error) {
    if (!(error instanceof CadreError)) throw error;
    process.stderr.write(`cadre run: ${error.message}\n`);
    return 2;
  }
  if (!claudeFound(values.redis !== undefined)) return 1;
  let outDir: string;
  if (values.resume !== undefined) {
    const given = values.resume as string;
    const dir = given === "" ? await latestRunOf(file, resolve(RUNS_DIR)) : resolve(given);
    if (dir === undefined) {
      process.stderr.write(`cadre run: no earlier run of ${file} under ${RUNS_DIR} to resume\n`);
      return 2;
    }
    outDir = dir;
  } else {
    outDir = resolve((values.out as string | undefined) ?? `${RUNS_DIR}/${runDirName(new Date())}`);
  }

  const json = values.json === true;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const view = json
    ? (event: WorkflowRunEvent) => process.stdout.write(`${JSON.stringify(event)}\n`)
    : lineView((line) => process.stdout.write(`${line}\n`));
  const stopping = stopOnSignals("the workflow run");
  if (replay) say(`cadre run: replaying run ${replay.of.run_id} (${replay.of.dir})`);
  let traces: WorkflowTelemetry | undefined;
  let dashboard: WorkflowDashboard | undefined;
  let result: WorkflowRunResult;
  try {
    if (telemetry || address) {
      // Checked first, so that a script refused before launch starts no exporter or server (runWorkflow checks it again: it is cheap).
      const { meta } = await checkWorkflowScript(source);
      if (telemetry) {
        traces = await (await loadTelemetry()).startWorkflowTelemetry(
          telemetry,
          { name: meta.name, description: meta.description, distributed: values.redis !== undefined, concurrency: options.concurrency },
          (line) => say(`cadre run: ${line}`),
        );
      }
      if (address) {
        dashboard = await WorkflowDashboard.open({ address, token, meta, outDir, budgetUsd: options.budgetUsd, rehearsal: rehearsal !== undefined });
        (json ? process.stderr : process.stdout).write(`cadre run: dashboard at ${dashboard.url}\n`);
      }
    }
    const [spans, page] = [traces, dashboard];
    result = await runWorkflow(source, {
      outDir,
      file,
      ...options,
      ...(rehearsal && { rehearsal }),
      ...(values.resume !== undefined && { resume: true }),
      ...(typeof values.redis === "string" && { redis: values.redis }),
      ...(replay && { replay }),
      signal: stopping.signal,
      stopExitCode: 130,
      onEvent: (event) => {
        spans?.applyWorkflow(event);
        page?.workflow(event);
        view(event);
      },
      ...((spans || page) && {
        onEngineEvent: (event) => {
          spans?.applyEngine(event);
          page?.engine(event);
        },
      }),
      ...(spans && { traceContext: (task) => spans.traceContext(task) }),
    });
  } catch (error) {
    await traces?.finish(undefined);
    await dashboard?.finish(undefined, outDir, true);
    if (error instanceof WorkflowScriptError || error instanceof ResumeError || error instanceof RecordWriteError) {
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 2;
    }
    if (!(error instanceof CadreError)) throw error;
    process.stderr.write(`cadre run: ${error.message}\n`);
    return 1;
  } finally {
    stopping.dispose();
  }
  await traces?.finish(result.summary);
  for (const warning of result.warnings) say(`cadre run: ${warning}`);
  for (const divergence of result.summary.replay?.divergences ?? []) say(`cadre run: ${divergence.message}`);
  for (const line of finalLines(result)) (json ? say : (text: string) => process.stdout.write(`${text}\n`))(line);
  await dashboard?.finish(result.summary, outDir, stopping.received !== undefined);
  return stopping.received ? SIGNAL_EXIT_CODES[stopping.received] : result.exitCode;
}
