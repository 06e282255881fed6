// A swarm's agents resolved: inline, from files or found by name, with their settings and subagents.
import { homedir } from "node:os";
import { resolve } from "node:path";
import { didYouMean } from "../../util/did-you-mean.ts";
import { own } from "../../util/own.ts";
import { normalizeModel, type SwarmAgentDefinition } from "../agents/definition.ts";
import { type DiscoveredAgent, discoverAgents } from "../agents/discover.ts";
import { AgentFileError, readAgentFile } from "../agents/file.ts";
import { withAbsolutePaths } from "./controls.ts";
import { POLICY_EVENTS } from "./hooks.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import type { InlineAgent, SubagentEntry, SwarmConfig } from "./schema.ts";

/** A path from the config: `~/x` is in the home directory, a relative one is relative to the config file. */
export function resolveConfigPath(baseDir: string, path: string): string {
  if (path === "~" || path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return resolve(baseDir, path);
}

/** How an agent's workers run, beyond its definition: limits, subagents, tools, environment, output shape, worktree. */
export type AgentSettings = Omit<InlineAgent, keyof SwarmAgentDefinition | "file" | "subagents"> & {
  /** Resolved to definitions (files read). */
  subagents?: Record<string, SwarmAgentDefinition>;
};

/** An agent of a swarm: its definition (inline, from a file, or found by name) and its settings. */
export type SwarmAgent = SwarmAgentDefinition & AgentSettings;

/** Makes a config path absolute and has it checked as a directory; returns the absolute path. */
export type DirectoryCheck = (path: PathSegment[], value: string) => string;

/** The agent files `cadre agents` lists from the config's directory, read once and only when needed. */
export class Discovery {
  #found: Promise<DiscoveredAgent[]> | undefined;

  constructor(private readonly baseDir: string) {}

  all(): Promise<DiscoveredAgent[]> {
    this.#found ??= discoverAgents({ cwd: this.baseDir });
    return this.#found;
  }

  /** The file that wins for `name`, as `cadre agents` would show it: a definition, or why the file cannot be used. */
  async find(name: string): Promise<DiscoveredAgent | undefined> {
    return (await this.all()).find((agent) => agent.name === name && !(agent.ok && agent.shadowedBy !== undefined));
  }
}

async function readFileAgent(file: string, path: PathSegment[], baseDir: string, issues: ConfigIssue[]): Promise<SwarmAgentDefinition | undefined> {
  const absolute = resolveConfigPath(baseDir, file);
  try {
    return await readAgentFile(absolute);
  } catch (error) {
    if (!(error instanceof AgentFileError)) throw error;
    issues.push(
      error.reason === "file not found"
        ? issue(path, `agent file not found: ${absolute}`, `paths are relative to the config file's directory (${baseDir})`)
        : issue(path, `agent file ${absolute}: ${error.reason}`),
    );
    return undefined;
  }
}

async function resolveSubagents(
  entries: Record<string, SubagentEntry>,
  path: PathSegment[],
  baseDir: string,
  issues: ConfigIssue[],
): Promise<Record<string, SwarmAgentDefinition>> {
  const resolved: Record<string, SwarmAgentDefinition> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const definition = typeof entry === "string" ? await readFileAgent(entry, [...path, name], baseDir, issues) : { name, ...entry };
    if (definition !== undefined) resolved[name] = { ...definition, name };
  }
  return resolved;
}

/**
 * Every agent the swarm uses as a full definition with its settings: those
 * under `agents` (inline, from a file, or found by name with settings added),
 * and those tasks, hooks and connections name that `cadre agents` finds.
 * Names nobody defines or finds are left to checkAgentReferences.
 */
export async function resolveAgents(
  config: SwarmConfig,
  baseDir: string,
  directory: DirectoryCheck,
): Promise<{ agents: Record<string, SwarmAgent>; issues: ConfigIssue[]; discovery: Discovery }> {
  const agents: Record<string, SwarmAgent> = {};
  const issues: ConfigIssue[] = [];
  const discovery = new Discovery(baseDir);

  for (const [name, entry] of Object.entries(config.agents ?? {})) {
    const path: PathSegment[] = ["agents", name];
    if (typeof entry === "string") {
      const definition = await readFileAgent(entry, path, baseDir, issues);
      // The config's key is the agent's name in this swarm, whatever the file calls it.
      if (definition !== undefined) agents[name] = { ...definition, name };
      continue;
    }
    const { file, subagents, add_dirs, ...rest } = entry;
    let base: SwarmAgentDefinition | undefined;
    if (file !== undefined) base = await readFileAgent(file, [...path, "file"], baseDir, issues);
    else if (entry.prompt === undefined) base = await discovered(name, path, discovery, issues);
    else base = { name, description: entry.description ?? "", prompt: entry.prompt };
    if (base === undefined) continue;
    const model = normalizeModel(rest.model);
    const agent: SwarmAgent = { ...base, ...withAbsolutePaths(withoutUndefined(rest), (file) => resolveConfigPath(baseDir, file)), name };
    if (rest.model !== undefined) {
      if (model === undefined) delete agent.model;
      else agent.model = model;
    }
    if (subagents !== undefined) agent.subagents = await resolveSubagents(subagents, [...path, "subagents"], baseDir, issues);
    if (add_dirs !== undefined) agent.add_dirs = add_dirs.map((dir, index) => directory([...path, "add_dirs", index], dir));
    agents[name] = agent;
  }

  for (const { name } of agentReferences(config)) {
    if (own(agents, name) !== undefined || own(config.agents, name) !== undefined) continue;
    const found = await discovery.find(name);
    if (found?.ok) agents[name] = { ...found.definition, name };
  }
  return { agents, issues, discovery };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}

/** An agent entry with neither prompt nor file: the agent of that name that `cadre agents` lists. */
async function discovered(name: string, path: PathSegment[], discovery: Discovery, issues: ConfigIssue[]): Promise<SwarmAgentDefinition | undefined> {
  const found = await discovery.find(name);
  if (found?.ok) return found.definition;
  if (found !== undefined) {
    issues.push(issue(path, `agent file ${found.file}: ${found.error}`));
  } else {
    const hint = `give prompt (or file: <agent file>); with neither, the entry means the agent \`cadre agents\` lists as "${name}", and there is none`;
    issues.push(issue([...path, "prompt"], "required key is missing", hint));
  }
  return undefined;
}

/** Every place the config names an agent. */
function agentReferences(config: SwarmConfig): { path: PathSegment[]; name: string }[] {
  const references: { path: PathSegment[]; name: string }[] = [];
  config.tasks.forEach((task, index) => {
    if (task.agent !== undefined) references.push({ path: ["tasks", index, "agent"], name: task.agent });
  });
  for (const [event, matchers] of Object.entries(config.hooks ?? {})) {
    (matchers ?? []).forEach((matcher, index) => {
      if (matcher.supervisor !== undefined) references.push({ path: ["hooks", event, index, "supervisor"], name: matcher.supervisor });
    });
  }
  for (const [from, targets] of Object.entries(config.connections ?? {})) {
    references.push({ path: ["connections", from], name: from });
    for (const [index, target] of targets.entries()) references.push({ path: ["connections", from, index], name: target });
  }
  return references;
}

/**
 * Tasks, hook supervisors and connections may only name agents the swarm
 * defines or `cadre agents` finds. `written`: names under `agents` whose
 * entries failed the schema (left out of `config`), which are still defined.
 */
export async function checkAgentReferences(
  config: SwarmConfig,
  agents: Record<string, SwarmAgent>,
  discovery: Discovery,
  written: readonly string[],
): Promise<ConfigIssue[]> {
  const issues: ConfigIssue[] = [];
  for (const { path, name } of agentReferences(config)) {
    if (own(agents, name) !== undefined || own(config.agents, name) !== undefined || written.includes(name)) continue;
    const broken = await discovery.find(name);
    if (broken !== undefined && !broken.ok) {
      issues.push(issue(path, `agent "${name}": ${broken.file}: ${broken.error}`));
      continue;
    }
    const defined = Object.keys(config.agents ?? {});
    const found = (await discovery.all()).flatMap((agent) => (agent.ok ? [agent.name] : []));
    const hint =
      didYouMean(name, [...defined, ...found]) ??
      (defined.length === 0 ? `define it under agents:, or put ${name}.md in .claude/agents` : `defined agents: ${defined.join(", ")}`);
    issues.push(issue(path, `unknown agent "${name}"`, hint));
  }
  for (const [event, matchers] of Object.entries(config.hooks ?? {})) {
    (matchers ?? []).forEach((matcher, index) => {
      if (matcher.policy !== undefined && !(POLICY_EVENTS as readonly string[]).includes(event)) {
        issues.push(
          issue(
            ["hooks", event, index, "policy"],
            `a policy judges tool calls before they run, so it works only under ${POLICY_EVENTS.join(" and ")}`,
          ),
        );
      }
    });
  }
  return issues;
}
