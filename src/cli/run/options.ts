// `cadre run`'s usage, help and flags, read into the options of a run.
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
// The modules that need no Redis client: `cadre run` without --redis never loads BullMQ.
import { RUN_ID_PATTERN, redisUrlProblem } from "../../distributed/index.ts";
import { type TelemetrySettings, telemetryHelp, telemetrySettings } from "../../telemetry/index.ts";
import { parseHostPort } from "../../util/http-guard.ts";
import { checkServerToken, numberFlag, parseFlags } from "../flags.ts";

export const USAGE =
  "usage: cadre run <config.(yaml|json)> [--concurrency N] [--out DIR | --resume [RUN-DIR] [--fresh]] [--rehearse [--rehearse-budget]] [--json] [--redis URL [--run-id ID]] [--ui [HOST:PORT]] [--otel [--otel-content]] [--replay RUN-DIR [--override FILE] [--in-place]]";

export const HELP = `${USAGE}

Runs the swarm a config file describes: every task in its own claude worker,
dependencies first, under the concurrency limit and the config's budget.

Options:
  -c, --concurrency N  workers running at once (default: the config's, else chosen by cadre)
  -o, --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]       go on with an earlier run (default: the newest run of this config under .cadre/runs):
                       tasks that succeeded keep their results; the others run again, continuing
                       their claude sessions; a task whose prompt or settings changed runs anew
  --fresh              with --resume: tasks that run again start new sessions
  --rehearse           play the config's rehearsal scripts on a built-in scripted model: offline, no
                       account. Costs are simulated (shown as ~$) and budget_usd does not stop it
  --rehearse-budget    with --rehearse or --replay: apply budget_usd to the simulated costs (to rehearse the stop)
  --replay RUN-DIR     replay that run (cadre replay RUN-DIR): the real claude against its recorded
                       replies instead of the model, offline; the config may be left out (the
                       recorded run's). Tools run for real: use a test checkout (docs/replay.md)
  --override FILE      with --replay: replies to give instead of recorded ones (session → turn → reply)
  --in-place           with --replay: run even in the working tree the recorded run worked in
  --json               print the run's events as NDJSON on stdout: the orchestrator's, and the swarm's
                       task_settled with each task's result (the final table goes to stderr)
  --redis URL          run the tasks on the hosts that serve this Redis (\`cadre worker --redis URL\`);
                       --concurrency and the budget then hold over all hosts
  --run-id ID          the distributed run's id, summary.json's run_id (default: made up and shown);
                       give the id of a run whose \`cadre run\` stopped to pick it up where it was,
                       in its run directory (--resume of a distributed run takes its id by itself)
  --ui [HOST:PORT]     serve a live web dashboard of the run (default 127.0.0.1 and a free port) and
                       print its address; it stays up after the run until Ctrl-C
  --token T            the dashboard's token (or CADRE_UI_TOKEN); generated when absent, and needed
                       to serve beyond loopback
${telemetryHelp(23)}
  -h, --help           show this help

On a terminal the view redraws in place; otherwise it prints one timestamped line per event.
Ctrl-C (or SIGTERM, or the terminal closing) once stops gracefully and writes what finished;
twice kills the workers at once.
Exit status: 0 all tasks succeeded, 1 some did not (or Redis is not reachable), 2 the config or the
arguments are wrong; 129, 130, 143 stopped by a hang-up (SIGHUP), Ctrl-C (SIGINT), SIGTERM: the
summary is still written.
`;

export interface RunOptions {
  /** As given, for messages; "" with --replay and no config (the recorded run's is used). */
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
  /** Set by --resume: the run directory given, or "" for the newest run of the config. */
  resume: string | undefined;
  fresh: boolean;
  /** Where to serve the dashboard (--ui), if at all. */
  ui: { host: string; port: number } | undefined;
  token: string | undefined;
  /** What the run exports over OpenTelemetry (--otel, the OTEL_* environment), if anything. */
  telemetry: TelemetrySettings | undefined;
  /** --replay: the run directory to replay, with its overrides file and whether it may run in the original tree. */
  replay: { dir: string; override: string | undefined; inPlace: boolean } | undefined;
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

/**
 * Flags whose value is optional, which parseArgs cannot express: alone (last, or
 * before a word that is not such a value), `--resume` means "the newest run" and
 * `--ui` "loopback, a free port".
 */
const OPTIONAL_VALUES: Record<string, { isValue: (word: string) => boolean; absent: string }> = {
  "--resume": { isValue: (word) => !word.startsWith("-") && !/\.(ya?ml|json)$/i.test(word), absent: "" },
  "--ui": { isValue: (word) => /^(\[[^\]]+\]|[^:\s/\\]+):\d+$/.test(word), absent: DEFAULT_UI },
};

/** `--ui` alone, for the commands that read their other flags themselves (`cadre run script.js`). */
export const OPTIONAL_UI = { "--ui": OPTIONAL_VALUES["--ui"]! };

export function withOptionalValues(args: string[], flags = OPTIONAL_VALUES): string[] {
  return args.map((arg, index) => {
    const flag = flags[arg];
    const next = args[index + 1];
    return flag && (next === undefined || !flag.isValue(next)) ? `${arg}=${flag.absent}` : arg;
  });
}

export function parseRunArgs(args: string[], now: Date = new Date(), cwd: string = process.cwd(), env = process.env): ParsedArgs {
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
    ui?: string;
    token?: string;
    otel?: boolean;
    "otel-content"?: boolean;
    replay?: string;
    override?: string;
    "in-place"?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseFlags(withOptionalValues(args), {
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
        ui: { type: "string" },
        token: { type: "string" },
        otel: { type: "boolean" },
        "otel-content": { type: "boolean" },
        replay: { type: "string" },
        override: { type: "string" },
        "in-place": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    }));
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  if (values.help) return { kind: "help" };
  const [config, ...extra] = positionals;
  if (config === undefined && values.replay === undefined) return { kind: "error", message: "no config file given" };
  if ((values.override !== undefined || values["in-place"]) && values.replay === undefined)
    return { kind: "error", message: `--${values.override !== undefined ? "override" : "in-place"} goes with --replay` };
  if (values.replay !== undefined && (values.rehearse || values.redis !== undefined || values.resume !== undefined))
    return { kind: "error", message: "--replay runs here against the recorded replies: leave out --rehearse, --redis and --resume" };
  if (extra.length > 0) return { kind: "error", message: `give one config file (also got "${extra.join('", "')}")` };
  if (values["rehearse-budget"] && !values.rehearse && values.replay === undefined)
    return { kind: "error", message: "--rehearse-budget goes with --rehearse or --replay" };

  let concurrency: number | undefined;
  let address: { host: string; port: number } | undefined;
  let telemetry: TelemetrySettings | undefined;
  try {
    concurrency = numberFlag("concurrency", values.concurrency, { integer: true, min: 1 });
    address = values.ui === undefined ? undefined : parseHostPort(values.ui, "--ui");
    telemetry = telemetrySettings({ otel: values.otel, content: values["otel-content"] }, env);
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  const token = values.token ?? env.CADRE_UI_TOKEN;
  if (values.token !== undefined && address === undefined) return { kind: "error", message: "--token goes with --ui" };
  try {
    if (address) checkServerToken(address.host, token, "read the run");
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
  const redis = values.redis === undefined ? undefined : { url: values.redis, runId, given: values["run-id"] !== undefined };
  if (values.resume !== undefined && values.out !== undefined)
    return { kind: "error", message: "--resume writes into the run it resumes; leave out --out" };
  if (values.fresh && values.resume === undefined) return { kind: "error", message: "--fresh goes with --resume" };
  const outDir = resolve(cwd, values.out ?? `.cadre/runs/${runDirName(now)}`);
  return {
    kind: "run",
    options: {
      config: config ?? "",
      concurrency,
      outDir,
      defaultOut: values.out === undefined,
      rehearse: values.rehearse === true,
      rehearseBudget: values["rehearse-budget"] === true,
      json: values.json === true,
      redis,
      resume: values.resume === undefined ? undefined : values.resume === "" ? "" : resolve(cwd, values.resume),
      fresh: values.fresh === true,
      ui: address,
      token: address && token,
      telemetry,
      replay:
        values.replay === undefined
          ? undefined
          : {
              dir: resolve(cwd, values.replay),
              override: values.override === undefined ? undefined : resolve(cwd, values.override),
              inPlace: values["in-place"] === true,
            },
    },
  };
}
