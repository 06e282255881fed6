import { readFileSync } from "node:fs";
import { agentsCommand } from "./agents.ts";
import { mcpCommand } from "./mcp.ts";
import { runCommand } from "./run.ts";
import { uiCommand } from "./ui.ts";
import { validateCommand } from "./validate.ts";

const HELP = `cadre: run many Claude Code agents at once

Usage:
  cadre run <config.(yaml|json)> [--concurrency N] [--out DIR] [--rehearse] [--json] [--ui [HOST:PORT]]
  cadre validate <config>
  cadre mcp [--http HOST:PORT] [--config swarm.yaml]
  cadre agents
  cadre ui [runs-dir] [--http HOST:PORT]

Commands:
  run       run the swarm a config file describes
  validate  check a swarm config without running it
  mcp       serve cadre's tools to a parent Claude over MCP
  agents    list agent definitions (agents/, .claude/agents, ~/.claude/agents)
  ui        a web dashboard of past runs (.cadre/runs)

Options:
  -h, --help     show this help
  -v, --version  show cadre's version
`;

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return manifest.version;
}

/** Runs the command line and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (command === "-v" || command === "--version") {
    process.stdout.write(`cadre ${version()}\n`);
    return 0;
  }
  if (command === "run") return runCommand(rest);
  if (command === "validate") return validateCommand(rest);
  if (command === "agents") return agentsCommand(rest);
  if (command === "mcp") return mcpCommand(rest);
  if (command === "ui") return uiCommand(rest);
  process.stderr.write(`cadre: unknown command "${command}"; run "cadre --help" to see the commands\n`);
  return 2;
}
