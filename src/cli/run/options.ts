// `cadre run`'s usage, help and one flag table for both kinds of plan (a swarm file, a workflow script), read into the options of a run.
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
// The modules that need no Redis client: `cadre run` without --redis never loads BullMQ.
import { RUN_ID_PATTERN, redisUrlProblem } from "../../distributed/index.ts";
import { CadreError } from "../../errors.ts";
import { CLAUDE_CODE_RUN_ID } from "../../run/index.ts";
import { type TelemetrySettings, telemetryHelp, telemetrySettings } from "../../telemetry/index.ts";
import { parseHostPort } from "../../util/http-guard.ts";
import { checkServerToken, numberFlag, parseFlags, UsageError } from "../flags.ts";

export const USAGE =
  "usage: cadre run <swarm.(yaml|json) | script.js> | --workflow NAME [--args JSON|@file.json] [--concurrency N] [--out DIR | --resume [RUN-DIR | wf_<id>]] [--rehearse] [--json] [--redis URL] [--ui [HOST:PORT]] [--otel] [--replay RUN-DIR] (cadre run --help lists them all)";

export const HELP = `${USAGE}

Runs a plan: a swarm file (YAML or JSON: tasks, dependencies, maps, loops), each task
in its own claude worker under the concurrency limit and the budget; or a workflow
script written for Claude Code (agent(), parallel(), pipeline(), phase(), log(), budget,
workflow(), args), each agent() call a claude worker under the same limits. Both have
the same record (summary.json), events, resume, replay, dashboard and telemetry.
While it runs, cadre send RUN-DIR TASK MESSAGE, cadre stop and cadre interrupt from another
terminal reach one of its tasks (through a socket in the run directory that only you can use).

Options:
  -c, --concurrency N  workers running at once (default: the config's, else chosen by cadre)
  -o, --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]       go on with an earlier run (default: the newest run of this file under .cadre/runs).
                       A swarm: tasks that succeeded keep their results; the others run again, continuing
                       their claude sessions; a task whose prompt or settings changed runs anew.
                       A script: each agent() call that succeeded with the same prompt and options gives its
                       recorded result; the others run. It keeps the args and budgets it was started with.
                       --resume wf_<id>: continue a run of Claude Code's own Workflow tool (the id it printed)
                       from the CLI's session files of this project, in a new run directory: the calls that
                       succeeded there are not asked again
  --rehearse           play scripted replies on a built-in scripted model: offline, no account, simulated
                       costs (~$). A swarm's are its rehearsal section; a script's, by agent label, are in
                       <script>.rehearsal.yaml (or .json) beside it
  --replay RUN-DIR     replay that run (cadre replay RUN-DIR): the real claude against its recorded replies
                       instead of the model, offline; the file may be left out (the recorded run's). Tools run
                       for real: use a test checkout (docs/replay.md)
  --override FILE      with --replay: replies to give instead of recorded ones (session → turn → reply)
  --in-place           with --replay: run even in the working tree the recorded run worked in
  --json               print the run's events as NDJSON on stdout: the orchestrator's, each task's
                       task_settled with its result, and a script's own (workflow_started, workflow_phase,
                       workflow_log, agent_started, agent_ended, workflow_ended); the final table goes to stderr
  --redis URL          run the tasks on the hosts that serve this Redis (\`cadre worker --redis URL\`);
                       --concurrency and the budget then hold over all hosts (a script itself runs here)
  --ui [HOST:PORT]     serve a live web dashboard of the run (default 127.0.0.1 and a free port) and
                       print its address; it stays up after the run until Ctrl-C
  --token T            the dashboard's token (or CADRE_UI_TOKEN); generated when absent, and needed
                       to serve beyond loopback
${telemetryHelp(23)}
  -h, --help           show this help

Swarm files only:
  --fresh              with --resume: tasks that run again start new sessions
  --rehearse-budget    with --rehearse or --replay: apply budget_usd to the simulated costs
  --run-id ID          with --redis: the distributed run's id, summary.json's run_id (default: made up
                       and shown); give the id of a run whose \`cadre run\` stopped to pick it up where
                       it was, in its run directory (--resume of a distributed run takes its id by itself)

Workflow scripts only:
  --workflow NAME      run the saved workflow .claude/workflows/NAME.js (the project's, else ~/.claude's)
  --args JSON|@FILE    the script's \`args\`, as JSON text or from a JSON file
  --budget TOKENS      budget.total, in output tokens (500k, 2m or a number): agent() throws once spent
  --budget-usd USD     the run's dollar budget (budget_usd): budget.usd.remaining() says what is left,
                       and agent() throws once it is spent (with --rehearse: of the simulated costs)
  --max-agents N       agent() calls per run, nested workflows' included (default 1000)
  --session-files      let the agents' claude processes keep their session files, for \`claude --resume
                       <session_id>\` (default: off; cadre keeps every agent's transcript in the record)

On a terminal the view redraws in place; otherwise it prints one timestamped line per event.
Ctrl-C (or SIGTERM, or the terminal closing) once stops gracefully and writes what finished;
twice kills the workers at once. Either way the record says how to go on (--resume).
Exit status: 0 all tasks succeeded (a script: it returned), 1 some did not (a script: it threw or
hit a limit; or Redis is not reachable), 2 the file or the arguments are wrong (a script refused
before launch); 129, 130, 143 stopped by a hang-up (SIGHUP), Ctrl-C (SIGINT), SIGTERM: the
summary is still written.
`;

/** Which kind of plan a flag applies to. */
type Kind = "swarm" | "script";

/** The one flag table: each flag with the kinds of plan it applies to (both when none is named). */
const FLAGS = {
  concurrency: { type: "string", short: "c" },
  out: { type: "string", short: "o" },
  rehearse: { type: "boolean" },
  json: { type: "boolean" },
  redis: { type: "string" },
  resume: { type: "string" },
  ui: { type: "string" },
  token: { type: "string" },
  otel: { type: "boolean" },
  "otel-content": { type: "boolean" },
  replay: { type: "string" },
  override: { type: "string" },
  "in-place": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  fresh: { type: "boolean", only: "swarm" },
  "rehearse-budget": { type: "boolean", only: "swarm" },
  "run-id": { type: "string", only: "swarm" },
  workflow: { type: "string", only: "script" },
  args: { type: "string", only: "script" },
  budget: { type: "string", only: "script" },
  "budget-usd": { type: "string", only: "script" },
  "max-agents": { type: "string", only: "script" },
  "session-files": { type: "boolean", only: "script" },
} as const satisfies Record<string, { type: "string" | "boolean"; short?: string; only?: Kind }>;

type Values = { [Name in keyof typeof FLAGS]?: (typeof FLAGS)[Name]["type"] extends "string" ? string : boolean };

/** What only a workflow script is run with. */
export interface ScriptOptions {
  /** --workflow: a saved workflow's name, instead of a file. */
  workflow: string | undefined;
  /** --args as given: JSON text, or @file.json (read when the run is prepared). */
  args: string | undefined;
  /** --budget, in output tokens. */
  budgetTokens: number | undefined;
  budgetUsd: number | undefined;
  maxAgents: number | undefined;
  sessionFiles: boolean;
}

export interface RunOptions {
  /** What is run: a swarm file, or a workflow script; a --replay without a file is decided by the recorded run. */
  kind: Kind | undefined;
  /** The file as given, for messages; "" with --workflow, or with --replay and no file (the recorded run's is used). */
  config: string;
  concurrency: number | undefined;
  /** Absolute. */
  outDir: string;
  /** True when --out was not given: the runner then picks a directory no earlier run used. */
  defaultOut: boolean;
  rehearse: boolean;
  /** Apply budget_usd to a rehearsal's simulated costs. */
  rehearseBudget: boolean;
  json: boolean;
  /** Run on the hosts of this Redis instead of in this process, as the run of this id (letters, digits, . _ -); `given` when --run-id said it. */
  redis: { url: string; runId: string; given: boolean } | undefined;
  /** Set by --resume: the run directory given, or "" for the newest run of the file. */
  resume: string | undefined;
  /** --resume wf_<id>: the run of Claude Code's Workflow tool to continue (found in the CLI's session files of this project). */
  resumeClaudeCode: string | undefined;
  fresh: boolean;
  /** Where to serve the dashboard (--ui), if at all. */
  ui: { host: string; port: number } | undefined;
  token: string | undefined;
  /** What the run exports over OpenTelemetry (--otel, the OTEL_* environment), if anything. */
  telemetry: TelemetrySettings | undefined;
  /** --replay: the run directory to replay, with its overrides file and whether it may run in the original tree. */
  replay: { dir: string; override: string | undefined; inPlace: boolean } | undefined;
  script: ScriptOptions;
}

export type ParsedArgs = { kind: "help" } | { kind: "error"; message: string } | { kind: "run"; options: RunOptions };

/** `2025-06-01T12-30-05Z`: sortable, and valid in a file name everywhere. */
export function runDirName(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}

/** Where `--ui` serves when it names no address: loopback, a free port. */
const DEFAULT_UI = "127.0.0.1:0";

/** A file the plan is read from: a workflow script, or a swarm file. */
const SCRIPT_FILE = /\.m?js$/i;
const PLAN_FILE = /\.(ya?ml|json|m?js)$/i;

/**
 * Flags whose value is optional, which parseArgs cannot express: alone (last, or
 * before a word that is not such a value), `--resume` means "the newest run" and
 * `--ui` "loopback, a free port".
 */
const OPTIONAL_VALUES: Record<string, { isValue: (word: string) => boolean; absent: string }> = {
  "--resume": { isValue: (word) => !word.startsWith("-") && !PLAN_FILE.test(word), absent: "" },
  "--ui": { isValue: (word) => /^(\[[^\]]+\]|[^:\s/\\]+):\d+$/.test(word), absent: DEFAULT_UI },
};

function withOptionalValues(args: string[]): string[] {
  return args.map((arg, index) => {
    const flag = OPTIONAL_VALUES[arg];
    const next = args[index + 1];
    return flag && (next === undefined || !flag.isValue(next)) ? `${arg}=${flag.absent}` : arg;
  });
}

export function parseRunArgs(args: string[], now: Date = new Date(), cwd: string = process.cwd(), env = process.env): ParsedArgs {
  try {
    const { values, positionals } = parseFlags(withOptionalValues(args), { options: FLAGS, allowPositionals: true });
    if (values.help) return { kind: "help" };
    const kind = kindOf(values, positionals);
    checkCombinations(values, positionals, kind);
    return { kind: "run", options: optionsOf(values, positionals[0] ?? "", kind, { now, cwd, env }) };
  } catch (error) {
    // A value wrong in itself: an address, a token, the OTEL_* settings.
    if (!(error instanceof UsageError || error instanceof CadreError)) throw error;
    return { kind: "error", message: error.message };
  }
}

/** The kind of plan the arguments name: a script by its extension or --workflow; undefined for a --replay without a file. */
function kindOf(values: Values, positionals: string[]): Kind | undefined {
  const file = positionals[0];
  if (values.workflow !== undefined || (file !== undefined && SCRIPT_FILE.test(file)) || continuesClaudeCode(values)) return "script";
  return file === undefined ? undefined : "swarm";
}

/** --resume wf_<id>: a run of Claude Code's Workflow tool, not a run directory. */
function continuesClaudeCode(values: Values): boolean {
  return values.resume !== undefined && CLAUDE_CODE_RUN_ID.test(values.resume);
}

/** Flags that do not go together, or with this kind of plan: said in one line. */
function checkCombinations(values: Values, positionals: string[], kind: Kind | undefined): void {
  const refuse = (message: string) => {
    throw new UsageError(message);
  };
  const [file, ...extra] = positionals;
  if (file === undefined && values.replay === undefined && values.workflow === undefined && !continuesClaudeCode(values))
    refuse("no swarm file or workflow script given");
  if (continuesClaudeCode(values) && (values.workflow !== undefined || (file !== undefined && !SCRIPT_FILE.test(file))))
    refuse(
      `--resume ${values.resume} continues a Claude Code workflow run: give no swarm file or --workflow (a script file is the run's script, edited)`,
    );
  if (extra.length > 0 || (file !== undefined && values.workflow !== undefined))
    refuse(`give one swarm file or workflow script (also got "${[...extra, ...(values.workflow ? [file] : [])].join('", "')}")`);
  for (const [name, flag] of Object.entries(FLAGS) as [keyof Values, { only?: Kind }][]) {
    if (flag.only === undefined || values[name] === undefined || kind === undefined || kind === flag.only) continue;
    refuse(`--${name} goes with a ${flag.only === "script" ? "workflow script" : "swarm file"}, not with ${file ?? "this run"}`);
  }
  if ((values.override !== undefined || values["in-place"]) && values.replay === undefined)
    refuse(`--${values.override !== undefined ? "override" : "in-place"} goes with --replay`);
  if (values.replay !== undefined && (values.rehearse || values.redis !== undefined || values.resume !== undefined || values.workflow))
    refuse("--replay runs here against the recorded replies: leave out --rehearse, --redis, --resume and --workflow");
  if (values["rehearse-budget"] && !values.rehearse && values.replay === undefined) refuse("--rehearse-budget goes with --rehearse or --replay");
  if (values.token !== undefined && values.ui === undefined) refuse("--token goes with --ui");
  if (values["run-id"] !== undefined && values.redis === undefined) refuse("--run-id goes with --redis");
  if (values.resume !== undefined && values.out !== undefined) refuse("--resume writes into the run it resumes; leave out --out");
  if (values.fresh && values.resume === undefined) refuse("--fresh goes with --resume");
  const redisProblem = values.redis === undefined ? undefined : redisUrlProblem(values.redis);
  if (redisProblem) refuse(`--redis: ${redisProblem}`);
}

/** The run's options from flags already checked; a value that is wrong in itself (a number, an address) throws a UsageError. */
function optionsOf(values: Values, file: string, kind: Kind | undefined, at: { now: Date; cwd: string; env: NodeJS.ProcessEnv }): RunOptions {
  const { now, cwd, env } = at;
  const address = values.ui === undefined ? undefined : parseHostPort(values.ui, "--ui");
  const token = values.token ?? env.CADRE_UI_TOKEN;
  if (address) checkServerToken(address.host, token, "read the run");
  return {
    kind,
    config: file,
    concurrency: numberFlag("concurrency", values.concurrency, { integer: true, min: 1 }),
    outDir: resolve(cwd, values.out ?? `.cadre/runs/${runDirName(now)}`),
    defaultOut: values.out === undefined,
    rehearse: values.rehearse === true,
    rehearseBudget: values["rehearse-budget"] === true,
    json: values.json === true,
    redis: redisOf(values, now),
    resume: values.resume === undefined || continuesClaudeCode(values) ? undefined : values.resume === "" ? "" : resolve(cwd, values.resume),
    resumeClaudeCode: continuesClaudeCode(values) ? values.resume : undefined,
    fresh: values.fresh === true,
    ui: address,
    token: address && token,
    telemetry: telemetrySettings({ otel: values.otel, content: values["otel-content"] }, env),
    replay: values.replay === undefined ? undefined : replayOf(values as Values & { replay: string }, cwd),
    script: scriptOptionsOf(values),
  };
}

function redisOf(values: Values, now: Date): RunOptions["redis"] {
  if (values.redis === undefined) return undefined;
  const runId = values["run-id"] ?? `${runDirName(now)}-${randomBytes(3).toString("hex")}`;
  if (!RUN_ID_PATTERN.test(runId)) throw new UsageError(`--run-id may hold letters, digits, ".", "_" and "-" (at most 80), got "${runId}"`);
  return { url: values.redis, runId, given: values["run-id"] !== undefined };
}

function replayOf(values: Values & { replay: string }, cwd: string): NonNullable<RunOptions["replay"]> {
  const override = values.override === undefined ? undefined : resolve(cwd, values.override);
  return { dir: resolve(cwd, values.replay), override, inPlace: values["in-place"] === true };
}

function scriptOptionsOf(values: Values): ScriptOptions {
  return {
    workflow: values.workflow,
    args: values.args,
    budgetTokens: tokens(values.budget),
    budgetUsd: dollars(values["budget-usd"]),
    maxAgents: numberFlag("max-agents", values["max-agents"], { integer: true, min: 1 }),
    sessionFiles: values["session-files"] === true,
  };
}

/** "500k", "2m", "1.5m" or a plain number of tokens. */
function tokens(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (match === null) throw new UsageError(`--budget wants a number of output tokens such as 500k or 2m, got "${value}"`);
  return Math.round(Number(match[1]) * ({ k: 1_000, m: 1_000_000 }[match[2]!.toLowerCase() as "k" | "m"] ?? 1));
}

/** A positive number of dollars ("2", "0.5", "$2"). */
function dollars(value: string | undefined): number | undefined {
  const usd = numberFlag("budget-usd", value?.trim().replace(/^\$/, ""));
  if (usd === 0) throw new UsageError(`--budget-usd wants a number of dollars above 0, got "${value}"`);
  return usd;
}
