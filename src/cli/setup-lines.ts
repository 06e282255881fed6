// Lines that tell a person where this cadre stands on disk: the `claude mcp add` line that registers it, its README.
import { join } from "node:path";
import { cadreRoot } from "../util/package-root.ts";

/** A word the shell reads back as it is: bare when it holds nothing special, else in single quotes. */
function shellWord(word: string): string {
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * `claude mcp add --scope user cadre -- node <this cadre>/bin/cadre.js mcp`: it works from a
 * clone and from an install alike (the package is not on the registry, so `npx cadre` would
 * not find it from another directory), and `--scope user` registers it for every directory,
 * where the default scope is the directory `claude mcp add` runs in.
 */
export function mcpAddLine(): string {
  const root = cadreRoot();
  const bin = root === undefined ? "/path/to/cadre/bin/cadre.js" : shellWord(join(root, "bin", "cadre.js"));
  return `claude mcp add --scope user cadre -- node ${bin} mcp`;
}

/** Where a person reads more: this cadre's README (a clone's, or the installed package's). */
export function readmePath(): string {
  const root = cadreRoot();
  return root === undefined ? "README.md in cadre's repository" : join(root, "README.md");
}
