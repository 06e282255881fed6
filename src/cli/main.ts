import { CADRE_VERSION } from "../util/version.ts";
import { exitOnStrayErrors, reportUnexpected } from "./unexpected.ts";

const HELP = `cadre: run many Claude Code agents at once

Usage:
  cadre run <config.(yaml|json)> [--concurrency N] [--out DIR] [--rehearse [--rehearse-budget]] [--json] [--redis URL] [--ui [HOST:PORT]]
  cadre validate <config>
  cadre mcp [--http HOST:PORT] [--config swarm.yaml]
  cadre agents
  cadre worker --redis URL [--concurrency N]
  cadre ui [runs-dir] [--http HOST:PORT]

Commands:
  run       run the swarm a config file describes
  validate  check a swarm config without running it
  mcp       serve cadre's tools to a parent Claude over MCP
  agents    list agent definitions (agents/, .claude/agents, ~/.claude/agents)
  worker    run the tasks of distributed runs (cadre run --redis) on this host
  ui        a web dashboard of past runs (.cadre/runs)

Options:
  -h, --help     show this help
  -v, --version  show cadre's version
`;

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
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (command === "-v" || command === "--version") {
    process.stdout.write(`cadre ${CADRE_VERSION}\n`);
    return 0;
  }
  // Each command loads only its own modules: `cadre mcp` is started at the beginning of every
  // Claude Code session, and --help should not wait for zod, the MCP SDK or the terminal view.
  if (command === "run") return (await import("./run.ts")).runCommand(rest);
  if (command === "validate") return (await import("./validate.ts")).validateCommand(rest);
  if (command === "agents") return (await import("./agents.ts")).agentsCommand(rest);
  if (command === "mcp") return (await import("./mcp.ts")).mcpCommand(rest);
  if (command === "worker") return (await import("./worker.ts")).workerCommand(rest);
  if (command === "ui") return (await import("./ui.ts")).uiCommand(rest);
  process.stderr.write(`cadre: unknown command "${command}"; run "cadre --help" to see the commands\n`);
  return 2;
}
