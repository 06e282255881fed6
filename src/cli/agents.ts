// `cadre agents`: lists the agent definitions a swarm can name, and where each comes from.
import { homedir } from "node:os";
import { relative, sep } from "node:path";
import { agentSearchDirs, type DiscoveredAgent, discoverAgents, SHIPPED_SCOPE } from "../swarm/index.ts";
import { oneLine, printable } from "../util/one-line.ts";
import { parseFlags, UsageError } from "./flags.ts";

const USAGE = "usage: cadre agents";

const HELP = `${USAGE}

Lists the agent definitions a swarm can name: agents/ and .claude/agents in this
directory, ~/.claude/agents, then the agents cadre ships (marked "shipped with
cadre"); earlier ones win, and a later one of the same name is listed as shadowed.
Files that do not parse are named on stderr.

Options:
  -h, --help  show this help

Exit status: 0 listed (also when there are none), 2 the arguments are wrong.
`;
// Descriptions are often paragraphs (Claude Code uses them for routing); a table shows the start.
const DESCRIPTION_WIDTH = 80;

/** A path as short as it can be said: relative inside the project, ~/… inside the home directory (the closer one wins). */
function shortPath(path: string, cwd: string, home: string): string {
  const inCwd = path.startsWith(cwd + sep);
  const inHome = path.startsWith(home + sep);
  if (inHome && (!inCwd || home.length > cwd.length)) return `~${sep}${relative(home, path)}`;
  if (inCwd) return relative(cwd, path);
  return path;
}

/** Agent files are anyone's text: their names and descriptions are shown, never obeyed, by the terminal. */
function table(cells: string[][]): string {
  const rows = cells.map((row) => row.map(printable));
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  const pad = (cell: string, column: number, row: string[]) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0));
  return rows.map((row) => row.map((cell, column) => pad(cell, column, row)).join("  ")).join("\n");
}

/**
 * `cadre agents`: the agent files in the project's agents/, its .claude/agents
 * and ~/.claude/agents, in that precedence; a name defined again later is
 * listed as shadowed. Files that fail to parse are reported on stderr.
 */
export async function agentsCommand(args: string[]): Promise<number> {
  try {
    const { values } = parseFlags(args, { options: { help: { type: "boolean", short: "h" } }, allowPositionals: false });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`cadre agents: ${error.message}; ${USAGE}\n`);
    return 2;
  }

  const cwd = process.cwd();
  const home = homedir();
  const found = await discoverAgents({ cwd, home });
  const short = (path: string) => shortPath(path, cwd, home);

  for (const agent of found) {
    if (!agent.ok) process.stderr.write(`cadre agents: skipping ${short(agent.file)}: ${agent.error}\n`);
  }
  const valid = found.filter((agent): agent is Extract<DiscoveredAgent, { ok: true }> => agent.ok);
  if (valid.length === 0) {
    const dirs = agentSearchDirs({ cwd, home }).map((dir) => short(dir.dir));
    process.stdout.write(`no agents found (searched ${dirs.join(", ")})\n`);
    return 0;
  }
  const listed = valid.map((agent) => {
    const notes = [agent.scope === SHIPPED_SCOPE && "shipped with cadre", agent.shadowedBy !== undefined && `shadowed by ${short(agent.shadowedBy)}`];
    const said = notes.filter((note) => note !== false);
    return {
      name: agent.name,
      description: agent.definition.description,
      source: said.length === 0 ? short(agent.file) : `${short(agent.file)} (${said.join("; ")})`,
    };
  });
  // On a terminal the table fits its width; piped, each row stays whole up to a fixed width.
  const fixed = Math.max(...listed.map((row) => row.name.length)) + Math.max(...listed.map((row) => row.source.length)) + 4;
  const width = process.stdout.isTTY ? Math.max(20, (process.stdout.columns ?? 100) - fixed) : DESCRIPTION_WIDTH;
  const rows = [["NAME", "DESCRIPTION", "SOURCE"], ...listed.map((row) => [row.name, oneLine(row.description, width), row.source])];
  process.stdout.write(`${table(rows)}\n`);
  return 0;
}
