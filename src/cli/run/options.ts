import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { numberFlag } from "../flags.ts";

export const USAGE = "usage: cadre run <config.(yaml|json)> [--concurrency N] [--out DIR] [--rehearse] [--json]";

export const HELP = `${USAGE}

Runs the swarm a config file describes: every task in its own claude worker,
dependencies first, under the concurrency limit and the config's budget.

Options:
  --concurrency N  workers running at once (default: the config's, else 4)
  --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --rehearse       play the config's rehearsal scripts on a built-in scripted model: offline, no account
  --json           print the run's events as NDJSON on stdout: the orchestrator's, and the swarm's
                   task_settled with each task's result (the final table goes to stderr)
  -h, --help       show this help

On a terminal the view redraws in place; otherwise it prints one timestamped line per event.
Ctrl-C once stops gracefully and writes what finished; twice kills the workers at once.
Exit status: 0 all tasks succeeded, 1 some did not, 2 the config or the arguments are wrong, 130 interrupted.
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
  json: boolean;
}

export type ParsedArgs = { kind: "help" } | { kind: "error"; message: string } | { kind: "run"; options: RunOptions };

/** `2025-06-01T12-30-05Z`: sortable, and valid in a file name everywhere. */
export function runDirName(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, "Z")
    .replaceAll(":", "-");
}

export function parseRunArgs(args: string[], now: Date = new Date(), cwd: string = process.cwd()): ParsedArgs {
  let values: { concurrency?: string; out?: string; rehearse?: boolean; json?: boolean; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: {
        concurrency: { type: "string", short: "c" },
        out: { type: "string", short: "o" },
        rehearse: { type: "boolean" },
        json: { type: "boolean" },
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

  let concurrency: number | undefined;
  try {
    concurrency = numberFlag("concurrency", values.concurrency, { integer: true, min: 1 });
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  const outDir = resolve(cwd, values.out ?? `.cadre/runs/${runDirName(now)}`);
  return {
    kind: "run",
    options: { config, concurrency, outDir, defaultOut: values.out === undefined, rehearse: values.rehearse === true, json: values.json === true },
  };
}
