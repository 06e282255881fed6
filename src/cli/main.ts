const HELP = `cadre: run many Claude Code agents at once

Usage:
  cadre run <config.(yaml|json)> [--concurrency N] [--out DIR] [--rehearse] [--json]
  cadre validate <config>
  cadre mcp [--http HOST:PORT] [--config swarm.yaml]
  cadre agents

Options:
  -h, --help     show this help
  -v, --version  show cadre's version and the claude CLI it uses
`;

/** Runs the command line and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  process.stderr.write(`cadre: unknown command "${command}"; run "cadre --help" to see the commands\n`);
  return 2;
}
