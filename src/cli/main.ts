// The `cadre` command line's entry: the top-level help, and each command dispatched to its module.
import { closest } from "../util/did-you-mean.ts";
import { CADRE_VERSION } from "../util/version.ts";
import { readmePath } from "./setup-lines.ts";
import { exitOnStrayErrors, reportUnexpected } from "./unexpected.ts";

/** The help; a function, so that finding cadre's README on disk costs nothing unless it is asked for. */
const help = () => `cadre: run many Claude Code agents at once

Usage: cadre <command> [options]

Commands:
  cadre run <file>          run a swarm file (YAML or JSON) or a workflow script (.js, Claude Code's dialect)
  cadre replay <run-dir>    run a recorded run again against its recorded replies: offline, no cost
  cadre send <run-dir> <task> <message>
                            write a message into a running task's turn (<run-dir> may be latest)
  cadre stop <run-dir> <task>
                            stop one running task (cancelled; the rest of the run goes on)
  cadre interrupt <run-dir> <task>
                            end a running task's current turn, its session kept
  cadre validate <file>     check a swarm file or a workflow script without running it
  cadre mcp                 serve cadre's tools to a parent Claude over MCP (stdio, or --http)
  cadre agents              list the agent definitions a swarm can name
  cadre worker --redis URL  run the tasks of distributed runs (cadre run --redis) on this host
  cadre ui [runs-dir]       a web dashboard of past runs (.cadre/runs)
  cadre doctor              check what a first run needs: Node, claude, a login, the API, git
  cadre help [command]      this help, or a command's (the same as cadre <command> --help)

Options of cadre run, for both kinds of file unless said (cadre run --help lists them all):
  --rehearse           play scripted replies on a scripted model: offline, no account
  -c, --concurrency N  workers running at once
  -o, --out DIR        where transcripts and summary.json go (default .cadre/runs/<timestamp>/)
  --resume [DIR]       go on with an earlier run (default: the newest of this file); nothing that
                       succeeded runs again
  --fresh              a swarm file's: with --resume, the tasks that run again start new sessions
  --args JSON|@FILE    a workflow script's args (a resumed script keeps its own unless given)
  --workflow NAME      run a saved workflow script (.claude/workflows/NAME.js) instead of a file
  --json               the run's events as NDJSON on stdout
  --ui [HOST:PORT]     a live web dashboard of the run
  --redis URL          run on the hosts that serve this Redis (cadre worker)
  --run-id ID          with --redis: the run's id, to pick up a run whose cadre run stopped

Options of cadre mcp (cadre mcp --help lists them all):
  --demo               a scripted parent Claude uses the tools: see them work, offline, no account
  --http HOST:PORT     Streamable HTTP instead of stdio, with a dashboard of the children at /
  --config FILE        a swarm config: its agents, defaults, budget and concurrency
  --warm N             spare children kept started for a quick spawn_session (default 1)

Options:
  -h, --help           show this help
  -V, --version        show cadre's version

Environment:
  ANTHROPIC_API_KEY    the API key workers use when you are not logged in (claude auth login)
  ANTHROPIC_BASE_URL   another API endpoint (a proxy, a gateway); cadre doctor checks it
  CADRE_CLAUDE_BIN     the claude executable to run (default: @anthropic-ai/claude-code, or the
                       Agent SDK's CLI, installed beside cadre; then claude on PATH)
  CADRE_UI_TOKEN       the dashboard's token for cadre run --ui and cadre ui (as --token)
  CADRE_MCP_TOKEN      the bearer token of cadre mcp --http (as --token)
  CADRE_OTEL_CONTENT=1 put prompts and tool inputs in OpenTelemetry spans (as --otel-content)
  CADRE_DEBUG=1        print where an unexpected error came from (its stack)
  CADRE_GROUP          set by cadre on every process it starts (the reaper's mark); not yours to set
  NO_COLOR=1           no color in the run's view (FORCE_COLOR=1: color also when piped)
A swarm file reads the environment too: \${VAR}, or \${VAR:-default} when VAR is unset or empty.

Exit status:
  0                    success
  1                    a task did not succeed, cadre doctor found something to fix, or an
                       unexpected error
  2                    wrong arguments, or a config that is not valid
  129, 130, 143        stopped by SIGHUP, SIGINT (Ctrl-C), SIGTERM
Each command's --help says what its own codes mean.

More: cadre <command> --help, and ${readmePath()}.
`;

/** The commands, each loaded only when run (see dispatch). */
const COMMANDS = ["run", "replay", "send", "stop", "interrupt", "validate", "mcp", "agents", "worker", "ui", "doctor", "help"];

/**
 * Runs the command line and resolves to the process exit code. Never throws,
 * and never prints a stack trace unless CADRE_DEBUG=1 (see unexpected.ts).
 */
export async function main(argv: string[]): Promise<number> {
  const prefix = argv[0] === undefined || argv[0].startsWith("-") ? "cadre" : `cadre ${argv[0]}`;
  exitOnStrayErrors(prefix);
  try {
    return await dispatch(argv);
  } catch (error) {
    return reportUnexpected(prefix, error);
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help") {
    process.stdout.write(help());
    return 0;
  }
  // -V as commander-based and GNU tools have it; -v too, as npm, node and vitest have it: cadre has
  // no --verbose it could mean, and scripts that ask `cadre -v` keep working.
  if (command === "-V" || command === "-v" || command === "--version") {
    process.stdout.write(`cadre ${CADRE_VERSION}\n`);
    return 0;
  }
  if (command === "help") {
    const [topic = "help", ...extra] = rest;
    if (extra.length > 0) return refuse(`help takes one command (got "${rest.join('", "')}")`);
    return dispatch(topic === "help" || topic.startsWith("-") ? [] : [topic, "--help"]);
  }
  // Each command loads only its own modules: `cadre mcp` is started at the beginning of every
  // Claude Code session, and --help should not wait for zod, the MCP SDK or the terminal view.
  if (command === "run") return (await import("./run.ts")).runCommand(rest);
  if (command === "replay") return (await import("./replay.ts")).replayCommand(rest);
  if (command === "send" || command === "stop" || command === "interrupt") return (await import("./steer.ts")).steerCommand(command, rest);
  if (command === "validate") return (await import("./validate.ts")).validateCommand(rest);
  if (command === "agents") return (await import("./agents.ts")).agentsCommand(rest);
  if (command === "mcp") return (await import("./mcp.ts")).mcpCommand(rest);
  if (command === "worker") return (await import("./worker.ts")).workerCommand(rest);
  if (command === "ui") return (await import("./ui.ts")).uiCommand(rest);
  if (command === "doctor") return (await import("./doctor.ts")).doctorCommand(rest);
  // Loaded only here: flags.ts brings node:crypto (server tokens), which --help need not wait for.
  if (command.startsWith("-")) return refuse((await import("./flags.ts")).unknownOption(command.replace(/=.*/, ""), ["help", "version"]));
  const match = closest(command, COMMANDS);
  return refuse(`unknown command "${command}"${match === undefined ? "" : ` (did you mean "${match}"?)`}`);
}

function refuse(problem: string): number {
  process.stderr.write(`cadre: ${problem}; see cadre --help\n`);
  return 2;
}
