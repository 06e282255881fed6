import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
// The modules that need no Redis client: `cadre run` without --redis never loads BullMQ.
import { RUN_ID_PATTERN } from "../../distributed/keys.ts";
import { redisUrlProblem } from "../../distributed/url.ts";
import { numberFlag } from "../flags.ts";

export const USAGE =
  "usage: cadre run <config.(yaml|json)> [--concurrency N] [--out DIR | --resume [RUN-DIR] [--fresh]] [--rehearse [--rehearse-budget]] [--json] [--redis URL [--run-id ID]]";

export const HELP = `${USAGE}

Runs the swarm a config file describes: every task in its own claude worker,
dependencies first, under the concurrency limit and the config's budget.

Options:
  --concurrency N    workers running at once (default: the config's, else 4)
  --out DIR          where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]     go on with an earlier run (default: the newest run of this config under .cadre/runs):
                     tasks that succeeded keep their results; the others run again, continuing
                     their claude sessions; a task whose prompt or settings changed runs anew
  --fresh            with --resume: tasks that run again start new sessions
  --rehearse         play the config's rehearsal scripts on a built-in scripted model: offline, no
                     account. Costs are simulated (shown as ~$) and budget_usd does not stop it
  --rehearse-budget  with --rehearse: apply budget_usd to the simulated costs (to rehearse the stop)
  --json             print the run's events as NDJSON on stdout: the orchestrator's, and the swarm's
                     task_settled with each task's result (the final table goes to stderr)
  --redis URL        run the tasks on the hosts that serve this Redis (\`cadre worker --redis URL\`);
                     --concurrency and the budget then hold over all hosts
  --run-id ID        the distributed run's id (default: made up and shown); give the id of a run
                     whose \`cadre run\` stopped to pick it up where it was
  -h, --help         show this help

On a terminal the view redraws in place; otherwise it prints one timestamped line per event.
Ctrl-C (or SIGTERM, or the terminal closing) once stops gracefully and writes what finished;
twice kills the workers at once.
Exit status: 0 all tasks succeeded, 1 some did not, 2 the config or the arguments are wrong;
129, 130, 143 stopped by a hang-up (SIGHUP), Ctrl-C (SIGINT), SIGTERM: the summary is still written.
`;

export interface RunOptions {
  /** As given, for messages. */
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
  /** Run on the hosts of this Redis instead of in this process, as the run of this id (letters, digits, . _ -). */
  redis: { url: string; runId: string } | undefined;
  /** Set by --resume: the run directory given, or "" for the newest run of the config. */
  resume: string | undefined;
  fresh: boolean;
}

export type ParsedArgs = { kind: "help" } | { kind: "error"; message: string } | { kind: "run"; options: RunOptions };

/** `2025-06-01T12-30-05Z`: sortable, and valid in a file name everywhere. */
export function runDirName(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}

/** `--resume` takes an optional directory: alone (last, or before another flag) it means "the newest run". */
function withResumeValue(args: string[]): string[] {
  return args.map((arg, index) => {
    const next = args[index + 1];
    const bare = next === undefined || next.startsWith("-") || /\.(ya?ml|json)$/i.test(next);
    return arg === "--resume" && bare ? "--resume=" : arg;
  });
}

export function parseRunArgs(args: string[], now: Date = new Date(), cwd: string = process.cwd()): ParsedArgs {
  let values: {
    concurrency?: string;
    out?: string;
    rehearse?: boolean;
    "rehearse-budget"?: boolean;
    json?: boolean;
    redis?: string;
    "run-id"?: string;
    help?: boolean;
    resume?: string;
    fresh?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: withResumeValue(args),
      options: {
        concurrency: { type: "string", short: "c" },
        out: { type: "string", short: "o" },
        rehearse: { type: "boolean" },
        "rehearse-budget": { type: "boolean" },
        json: { type: "boolean" },
        redis: { type: "string" },
        "run-id": { type: "string" },
        resume: { type: "string" },
        fresh: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  if (values.help) return { kind: "help" };
  const [config, ...extra] = positionals;
  if (config === undefined) return { kind: "error", message: "no config file given" };
  if (extra.length > 0) return { kind: "error", message: `give one config file (also got "${extra.join('", "')}")` };
  if (values["rehearse-budget"] && !values.rehearse) return { kind: "error", message: "--rehearse-budget goes with --rehearse" };

  let concurrency: number | undefined;
  try {
    concurrency = numberFlag("concurrency", values.concurrency, { integer: true, min: 1 });
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  const redisProblem = values.redis === undefined ? undefined : redisUrlProblem(values.redis);
  if (redisProblem) return { kind: "error", message: `--redis: ${redisProblem}` };
  if (values["run-id"] !== undefined && values.redis === undefined) return { kind: "error", message: "--run-id goes with --redis" };
  const runId = values["run-id"] ?? `${runDirName(now)}-${randomBytes(3).toString("hex")}`;
  if (!RUN_ID_PATTERN.test(runId)) {
    return { kind: "error", message: `--run-id may hold letters, digits, ".", "_" and "-" (at most 80), got "${runId}"` };
  }
  const redis = values.redis === undefined ? undefined : { url: values.redis, runId };
  if (values.resume !== undefined && values.out !== undefined)
    return { kind: "error", message: "--resume writes into the run it resumes; leave out --out" };
  if (values.fresh && values.resume === undefined) return { kind: "error", message: "--fresh goes with --resume" };
  const outDir = resolve(cwd, values.out ?? `.cadre/runs/${runDirName(now)}`);
  return {
    kind: "run",
    options: {
      config,
      concurrency,
      outDir,
      defaultOut: values.out === undefined,
      rehearse: values.rehearse === true,
      rehearseBudget: values["rehearse-budget"] === true,
      json: values.json === true,
      redis,
      resume: values.resume === undefined ? undefined : values.resume === "" ? "" : resolve(cwd, values.resume),
      fresh: values.fresh === true,
    },
  };
}
