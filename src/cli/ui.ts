// `cadre ui`: serves the dashboard of past runs from their summary.json and transcripts.
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import process from "node:process";
import { RunsDirectory, serveDashboard } from "../dashboard/index.ts";
import { parseHostPort } from "../util/http-guard.ts";
import { checkServerToken, parseFlags, UsageError } from "./flags.ts";
import { stopOnSignals, stopped } from "./signals.ts";

const USAGE = "usage: cadre ui [runs-dir] [--http HOST:PORT] [--token T]";

const HELP = `${USAGE}

Serves a web dashboard of past runs: each run's tasks, totals, timeline and
conversations, from its summary.json and transcripts. runs-dir is where
cadre run writes them (default .cadre/runs), or one run's own directory.

Options:
  --http HOST:PORT  where to serve (default 127.0.0.1 and a free port)
  --token T         the page's token (or CADRE_UI_TOKEN); generated when absent,
                    and needed to serve beyond loopback
  -h, --help        show this help

Exit status: 0 stopped by Ctrl-C (or SIGTERM, SIGHUP), 1 it could not serve,
2 the arguments are wrong or there is no runs directory.
`;

/** `cadre ui`: serves the dashboard of the runs in a directory until Ctrl-C. */
export async function uiCommand(args: string[]): Promise<number> {
  let dir: string;
  let address: { host: string; port: number };
  let token: string | undefined;
  try {
    const { values, positionals } = parseFlags(args, {
      options: { http: { type: "string" }, token: { type: "string" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    if (positionals.length > 1) throw new UsageError(`give one runs directory (also got "${positionals.slice(1).join('", "')}")`);
    dir = resolve(positionals[0] ?? ".cadre/runs");
    if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
      throw new UsageError(`no runs directory at ${dir} (cadre run writes its runs to .cadre/runs)`);
    }
    address = parseHostPort(values.http ?? "127.0.0.1:0", "--http");
    token = values.token ?? process.env.CADRE_UI_TOKEN;
    checkServerToken(address.host, token, "read the runs");
  } catch (error) {
    process.stderr.write(`cadre ui: ${(error as Error).message}\n${error instanceof UsageError ? "" : `${USAGE}\n`}`);
    return 2;
  }

  const stop = stopOnSignals("the dashboard").signal;
  const source = new RunsDirectory(dir);
  const runs = await source.runs();
  const serving = await serveDashboard(source, { ...address, token });
  process.stderr.write(`cadre ui: ${runs.length} run${runs.length === 1 ? "" : "s"} in ${dir}\n`);
  process.stdout.write(`cadre ui: dashboard at ${serving.url}\n`);
  await stopped(stop);
  await serving.close();
  return 0;
}
