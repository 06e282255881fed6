import { stat } from "node:fs/promises";
import { parseAgentScriptName, type RehearsalScript } from "../../rehearsal/index.ts";
import type { AgentDefinition } from "../agents/definition.ts";
import { resolveDependencies } from "./dependencies.ts";
import { didYouMean } from "./did-you-mean.ts";
import { expandTasks } from "./expand.ts";
import type { Hooks } from "./hooks.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import { checkAgentReferences, resolveAgents, resolveConfigPath } from "./resolve-agents.ts";
import type { ForEachItem, SwarmConfig } from "./schema.ts";

export type ResolvedDefaults = Omit<NonNullable<SwarmConfig["defaults"]>, "cwd"> & {
  /** Absolute; the config file's directory unless set. */
  cwd: string;
};

/**
 * One task ready to run: for_each applied, dependencies resolved, paths
 * absolute. Its worker settings (model, cwd) are its own, as written: the
 * orchestrator layers them over its agent's and the defaults. Its time limit
 * is a task's alone, so the defaults' applies here.
 */
export interface ResolvedTask {
  name: string;
  /** The name as written; differs from `name` for a for_each copy. */
  template: string;
  /** Where the task is in the config's `tasks` list. */
  index: number;
  /** The for_each item this copy was made for. */
  item?: ForEachItem;
  agent?: string;
  /** {{item}} filled in; {{results.<task>}} left for the runner (see fillResults). */
  prompt: string;
  /** Names of the tasks that must finish first (for_each groups expanded). */
  depends_on: string[];
  model?: string;
  timeout_s?: number;
  /** Absolute; absent when the task does not set one (the defaults' applies). */
  cwd?: string;
  retries: number;
  priority: number;
}

export interface ResolvedSwarmConfig {
  name: string;
  /** The config file (absolute), when loaded from one. */
  file?: string;
  /** The directory relative paths were resolved against. */
  base_dir: string;
  concurrency?: number;
  budget_usd?: number;
  cache_stagger?: boolean;
  /** False: workers keep no session files. Absent: true. */
  session_persistence?: boolean;
  defaults: ResolvedDefaults;
  agents: Record<string, AgentDefinition>;
  tasks: ResolvedTask[];
  hooks: Hooks;
  connections: Record<string, string[]>;
  /**
   * By task name (a script given for a for_each task as written is copied to
   * each of its tasks), plus "peer:<agent>" / "supervisor:<agent>" as written.
   */
  rehearsal: Record<string, RehearsalScript>;
}

export type ConfigResult = { ok: true; config: ResolvedSwarmConfig } | { ok: false; errors: ConfigIssue[] };

/**
 * The checks no schema can make (agent files, references between tasks and
 * agents, the dependency graph, directories) and the assembly of the config a
 * runner uses.
 */
export async function resolveSwarmConfig(
  input: SwarmConfig,
  context: { baseDir: string; file?: string; defaultName: string },
): Promise<ConfigResult> {
  const { baseDir } = context;
  const agents = await resolveAgents(input.agents, baseDir);
  const expanded = expandTasks(input.tasks);
  const graph = resolveDependencies(expanded.tasks);
  const issues: ConfigIssue[] = [...agents.issues, ...checkAgentReferences(input), ...expanded.issues, ...graph.issues];

  const directories = new Map<string, PathSegment[]>();
  const directory = (path: PathSegment[], value: string) => {
    const absolute = resolveConfigPath(baseDir, value);
    if (!directories.has(absolute)) directories.set(absolute, path);
    return absolute;
  };

  const defaults: ResolvedDefaults = {
    ...input.defaults,
    cwd: input.defaults?.cwd === undefined ? baseDir : directory(["defaults", "cwd"], input.defaults.cwd),
    ...(input.defaults?.plugin_dirs && {
      plugin_dirs: input.defaults.plugin_dirs.map((dir, index) => directory(["defaults", "plugin_dirs", index], dir)),
    }),
  };
  const tasks = expanded.tasks.map((task): ResolvedTask => {
    // Not the orchestrator's default time limit: that would cover the workers a task spawns too.
    const timeout = task.entry.timeout_s ?? defaults.timeout_s;
    return {
      name: task.name,
      template: task.template,
      index: task.index,
      ...(task.item !== undefined && { item: task.item }),
      ...(task.entry.agent !== undefined && { agent: task.entry.agent }),
      prompt: task.prompt,
      depends_on: graph.dependsOn.get(task.name) ?? [],
      ...(task.entry.model !== undefined && { model: task.entry.model }),
      ...(timeout !== undefined && { timeout_s: timeout }),
      ...(task.cwd !== undefined && { cwd: directory(["tasks", task.index, "cwd"], task.cwd) }),
      retries: task.entry.retries,
      priority: task.entry.priority,
    };
  });

  for (const [absolute, path] of directories) {
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) issues.push(issue(path, `directory not found: ${absolute}`));
    else if (!info.isDirectory()) issues.push(issue(path, `not a directory: ${absolute}`));
  }

  const rehearsal = rehearsalByTask(input.rehearsal ?? {}, tasks, Object.keys(agents.agents), issues);
  if (issues.length > 0) return { ok: false, errors: issues };
  return {
    ok: true,
    config: {
      name: input.name ?? context.defaultName,
      ...(context.file !== undefined && { file: context.file }),
      base_dir: baseDir,
      ...(input.concurrency !== undefined && { concurrency: input.concurrency }),
      ...(input.budget_usd !== undefined && { budget_usd: input.budget_usd }),
      ...(input.cache_stagger !== undefined && { cache_stagger: input.cache_stagger }),
      session_persistence: input.session_persistence,
      defaults,
      agents: agents.agents,
      tasks,
      hooks: input.hooks ?? {},
      connections: input.connections ?? {},
      rehearsal,
    },
  };
}

function rehearsalByTask(
  scripts: Record<string, RehearsalScript>,
  tasks: ResolvedTask[],
  agentNames: string[],
  issues: ConfigIssue[],
): Record<string, RehearsalScript> {
  const byTask: Record<string, RehearsalScript> = {};
  const names = new Set(tasks.map((task) => task.name));
  const templates = new Set(tasks.map((task) => task.template));
  for (const [key, script] of Object.entries(scripts)) {
    // Workers that are not tasks play scripts named after their role and agent ("peer:<agent>", "supervisor:<agent>").
    const agent = parseAgentScriptName(key)?.agent;
    if (agent !== undefined) {
      if (agentNames.includes(agent)) byTask[key] = script;
      else issues.push(issue(["rehearsal", key], `unknown agent "${agent}"`, didYouMean(agent, agentNames)));
    } else if (!names.has(key) && !templates.has(key)) {
      const hint = didYouMean(key, [...names, ...templates]) ?? 'keys are task names, "peer:<agent>" or "supervisor:<agent>"';
      issues.push(issue(["rehearsal", key], `unknown task "${key}"`, hint));
    }
  }
  for (const task of tasks) {
    // A script for this very task wins over one for its for_each group.
    const script = scripts[task.name] ?? scripts[task.template];
    if (script !== undefined) byTask[task.name] = script;
  }
  return byTask;
}
