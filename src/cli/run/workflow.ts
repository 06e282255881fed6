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
import { latestRunOf, RecordWriteError, ResumeError, runWorkflow, type WorkflowRunResult } from "../../run/index.ts";
import { ClaudeNotFoundError, locateClaude } from "../../worker/index.ts";
import { findSavedWorkflow, type WorkflowEvent, WorkflowScriptError } from "../../workflow/index.ts";
import { numberFlag, parseFlags } from "../flags.ts";
import { SIGNAL_EXIT_CODES, stopOnSignals } from "../signals.ts";
import { runDirName } from "./options.ts";
import { RUNS_DIR } from "./prepare.ts";

export const WORKFLOW_USAGE =
  "usage: cadre run <script.js> | --workflow NAME [--args JSON|@file.json] [--budget TOKENS] [--budget-usd USD] [--max-agents N] [--concurrency N] [--out DIR | --resume [RUN-DIR]] [--rehearse] [--json] [--redis URL]";

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
  -o, --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]       go on with an earlier run of the script (default: its newest under .cadre/runs):
                       agent() calls replay from its record up to the first that changed or failed
  --rehearse           play scripted replies on a built-in scripted model, offline: the scripts, by
                       agent label, are in <script>.rehearsal.yaml (or .json) beside the script
  --json               print the run's events as NDJSON on stdout
  --redis URL          run the agents on the hosts that serve this Redis; the script runs here
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
function lineView(write: (line: string) => void): (event: WorkflowEvent) => void {
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
    ({ values, positionals } = parseFlags(resumeAlone, {
      options: {
        workflow: { type: "string" },
        args: { type: "string" },
        budget: { type: "string" },
        "budget-usd": { type: "string" },
        "max-agents": { type: "string" },
        concurrency: { type: "string", short: "c" },
        out: { type: "string", short: "o" },
        resume: { type: "string" },
        rehearse: { type: "boolean" },
        json: { type: "boolean" },
        redis: { type: "string" },
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
  if ((name === undefined) === (positionals.length === 0)) return usage("give one workflow script, or --workflow NAME");
  if (positionals.length > 1) return usage(`give one workflow script (also got "${positionals.slice(1).join('", "')}")`);
  if (values.resume !== undefined && values.out !== undefined) return usage("--resume writes into the run it resumes; leave out --out");
  const redisProblem = typeof values.redis === "string" ? redisUrlProblem(values.redis) : undefined;
  if (redisProblem) return usage(`--redis: ${redisProblem}`);

  let file: string;
  let source: string;
  let options: Awaited<ReturnType<typeof settings>>;
  async function settings() {
    return {
      args: await argsOf(values.args as string | undefined),
      budgetTokens: tokens(values.budget as string | undefined),
      budgetUsd: dollars(values["budget-usd"] as string | undefined),
      maxAgents: numberFlag("max-agents", values["max-agents"] as string | undefined, { integer: true, min: 1 }),
      concurrency: numberFlag("concurrency", values.concurrency as string | undefined, { integer: true, min: 1 }),
    };
  }
  try {
    if (name !== undefined) {
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
    options = await settings();
  } catch (error) {
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
  if (!rehearsal && values.redis === undefined) {
    try {
      locateClaude();
    } catch (error) {
      if (!(error instanceof ClaudeNotFoundError)) throw error;
      process.stderr.write(`cadre run: ${error.message}\n`);
      return 1;
    }
  }
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
    ? (event: WorkflowEvent) => process.stdout.write(`${JSON.stringify(event)}\n`)
    : lineView((line) => process.stdout.write(`${line}\n`));
  const stopping = stopOnSignals("the workflow run");
  let result: WorkflowRunResult;
  try {
    result = await runWorkflow(source, {
      outDir,
      file,
      ...options,
      ...(rehearsal && { rehearsal }),
      ...(values.resume !== undefined && { resume: true }),
      ...(typeof values.redis === "string" && { redis: values.redis }),
      signal: stopping.signal,
      stopExitCode: 130,
      onEvent: view,
    });
  } catch (error) {
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
  for (const warning of result.warnings) say(`cadre run: ${warning}`);
  for (const line of finalLines(result)) (json ? say : (text: string) => process.stdout.write(`${text}\n`))(line);
  return stopping.received ? SIGNAL_EXIT_CODES[stopping.received] : result.exitCode;
}
