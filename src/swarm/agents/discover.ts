// Where agent files are found (agents/, .claude/agents, ~/.claude/agents, the shipped ones), earlier ones winning.
import { readdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { cadreRoot } from "../../util/package-root.ts";
import type { SwarmAgentDefinition } from "./definition.ts";
import { AgentFileError, agentFileStem, readAgentFile } from "./file.ts";

/** A directory searched for agent files; earlier ones win when two define the same name. */
export interface AgentSearchDir {
  dir: string;
  /** Short label for listings: "project", "project .claude", "user", "shipped" (the agents cadre's package carries). */
  scope: string;
}

export type DiscoveredAgent =
  | { ok: true; name: string; file: string; scope: string; definition: SwarmAgentDefinition; shadowedBy?: string }
  | { ok: false; name: string; file: string; scope: string; error: string };

export interface DiscoverOptions {
  /** The project directory; default process.cwd(). */
  cwd?: string;
  /** The user's home; default os.homedir() (which follows $HOME). */
  home?: string;
}

/**
 * The project's `agents/`, its `.claude/agents`, `~/.claude/agents`, then the agents cadre's
 * package ships (its own `agents/`, so a copied example can name them wherever cadre is
 * installed): the precedence `cadre agents` uses. A folder already listed (cadre's own
 * clone is the project) is listed once.
 */
export function agentSearchDirs(options: DiscoverOptions = {}): AgentSearchDir[] {
  const cwd = resolve(options.cwd ?? process.cwd());
  const home = resolve(options.home ?? homedir());
  const dirs = [
    { dir: join(cwd, "agents"), scope: "project" },
    { dir: join(cwd, ".claude", "agents"), scope: "project .claude" },
    { dir: join(home, ".claude", "agents"), scope: "user" },
  ];
  const root = cadreRoot();
  const shipped = root === undefined ? undefined : join(root, "agents");
  if (shipped !== undefined && !dirs.some(({ dir }) => dir === shipped)) dirs.push({ dir: shipped, scope: SHIPPED_SCOPE });
  return dirs;
}

/** The scope of the agents cadre's package ships. */
export const SHIPPED_SCOPE = "shipped";

async function markdownFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith(".md"))
      .map((entry) => join(dir, entry.name))
      .sort();
  } catch (error) {
    // A search directory that does not exist simply holds no agents.
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return [];
    throw error;
  }
}

/**
 * Every agent file in the search directories, in precedence order. A name
 * already defined by an earlier file is kept in the list but marked
 * `shadowedBy` that file; files that fail to parse are listed with their error.
 */
export async function discoverAgents(options: DiscoverOptions = {}): Promise<DiscoveredAgent[]> {
  const found: DiscoveredAgent[] = [];
  const winners = new Map<string, string>();
  for (const { dir, scope } of agentSearchDirs(options)) {
    for (const file of await markdownFiles(dir)) {
      try {
        const definition = await readAgentFile(file);
        const winner = winners.get(definition.name);
        if (winner === undefined) winners.set(definition.name, file);
        found.push({ ok: true, name: definition.name, file, scope, definition, ...(winner !== undefined && { shadowedBy: winner }) });
      } catch (error) {
        const reason = error instanceof AgentFileError ? error.reason : (error as Error).message;
        found.push({ ok: false, name: agentFileStem(file), file, scope, error: reason });
      }
    }
  }
  return found;
}
