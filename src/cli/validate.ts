// `cadre validate`: checks a swarm config without running it, and prints every problem with its path.
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { formatIssue, loadSwarmConfig } from "../swarm/index.ts";
import { inspectWorkflowScript } from "../workflow/index.ts";
import { parseFlags } from "./flags.ts";

const USAGE = "usage: cadre validate <config.(yaml|json) | script.js>";

const HELP = `${USAGE}

Checks a swarm config (schema, agent files, references, dependencies) without
running it, and prints every problem as \`path: message (hint)\`, in file order.
A workflow script (.js) gets the checks \`cadre run\` makes before launch: its
syntax, \`export const meta\` first and a pure literal, no import, no clock.

Options:
  -h, --help  show this help

Exit status: 0 the config is valid, 2 it is not (or the arguments are wrong).
`;

/** `cadre validate <config>`: every issue as `path: message (hint)` and exit 2, or a one-line summary and exit 0. */
export async function validateCommand(args: string[]): Promise<number> {
  let positionals: string[];
  try {
    const parsed = parseFlags(args, { options: { help: { type: "boolean", short: "h" } }, allowPositionals: true });
    positionals = parsed.positionals;
    if (parsed.values.help) {
      process.stdout.write(HELP);
      return 0;
    }
  } catch (error) {
    process.stderr.write(`cadre validate: ${(error as Error).message}; ${USAGE}\n`);
    return 2;
  }
  const [path, ...extra] = positionals;
  if (path === undefined || extra.length > 0) {
    process.stderr.write(`cadre validate: ${path === undefined ? "no config file given" : "give one config file"}; ${USAGE}\n`);
    return 2;
  }

  const file = resolve(path);
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile()) {
    process.stderr.write(`cadre validate: ${info === undefined ? "no such file" : "not a file"}: ${file}\n`);
    return 2;
  }

  const shown = path;
  if (/\.m?js$/i.test(file)) return validateScript(file, shown);
  const result = await loadSwarmConfig(file);
  if (!result.ok) {
    for (const item of result.errors) process.stderr.write(`${formatIssue(item, shown)}\n`);
    const count = result.errors.length === 1 ? "1 problem" : `${result.errors.length} problems`;
    process.stderr.write(`cadre validate: ${shown} is not valid (${count})\n`);
    return 2;
  }

  const { config } = result;
  const entries = new Set(config.tasks.map((task) => task.index)).size;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  const tasks = `${plural(config.tasks.length, "task")}${entries === config.tasks.length ? "" : ` (from ${entries} entries)`}`;
  const agentNames = Object.keys(config.agents);
  const agents = agentNames.length === 0 ? "no agents" : `${plural(agentNames.length, "agent")} (${agentNames.join(", ")})`;
  process.stdout.write(`OK ${shown}: swarm "${config.name}", ${tasks}, ${agents}\n`);
  return 0;
}

/** A workflow script's before-launch checks: every problem, one line each, and exit 2; or what it is, and exit 0. */
async function validateScript(file: string, shown: string): Promise<number> {
  const inspection = await inspectWorkflowScript(await readFile(file, "utf8"));
  if (!inspection.ok) {
    for (const problem of inspection.problems) process.stderr.write(`${shown}: ${problem.message}\n`);
    const count = inspection.problems.length === 1 ? "1 problem" : `${inspection.problems.length} problems`;
    process.stderr.write(`cadre validate: ${shown} would be refused before launch (${count})\n`);
    return 2;
  }
  const { meta } = inspection.script;
  const phases = meta.phases?.length ? `, phases ${meta.phases.map((phase) => phase.title).join(", ")}` : "";
  process.stdout.write(`${shown}: workflow "${meta.name}" (${meta.description})${phases}: ready to run\n`);
  return 0;
}
