// A swarm config resolved for running: absolute paths, agents, tasks expanded, dependencies, loops and worktrees.
import { stat } from "node:fs/promises";
import { parseAgentScriptName, patternOf, type RehearsalScript } from "../../rehearsal/index.ts";
import { didYouMean } from "../../util/did-you-mean.ts";
import { own } from "../../util/own.ts";
import { checkConditions } from "./conditions.ts";
import { type Controls, controlsOf, withAbsolutePaths } from "./controls.ts";
import { type ResultUse, resolveDependencies } from "./dependencies.ts";
import { type ExpandedTask, expandTasks, type MapSpec } from "./expand.ts";
import type { Hooks } from "./hooks.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import { type ResolvedLoop, resolveLoops, roundBase } from "./loops.ts";
import { checkAgentReferences, resolveAgents, resolveConfigPath, type SwarmAgent } from "./resolve-agents.ts";
import type { SalvageGaps } from "./salvage.ts";
import type { ForEachItem, SwarmConfig, TaskConfig } from "./schema.ts";
import { type PostsRepository, resolveWorktrees, type TaskWorktree } from "./worktrees.ts";

export type ResolvedDefaults = Omit<NonNullable<SwarmConfig["defaults"]>, "cwd" | "add_dirs"> & {
  /** Absolute; the config file's directory unless set. */
  cwd: string;
  /** Absolute. */
  add_dirs?: string[];
};

/** A task's own worker settings beyond model and cwd, as written (paths absolute). */
export type TaskSettings = Pick<TaskConfig, "output_schema" | "mcp_servers" | "permissions" | "env"> & Controls & { add_dirs?: string[] };

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
  /** The prompt took in an item of a dependency's result (a for_each copy): it goes as text only, whatever it says. */
  prompt_computed?: true;
  /** Names of the tasks that must finish first (for_each groups expanded). */
  depends_on: string[];
  model?: string;
  timeout_s?: number;
  /** Absolute; absent when the task does not set one (the defaults' applies). */
  cwd?: string;
  /** Absent: the defaults' retries, else the orchestrator's. */
  retries?: number;
  priority: number;
  /** The task's own budget (a loop's rounds share their task's). */
  budget_usd?: number;
  settings: TaskSettings;
  /** Its condition (CEL), evaluated once its dependencies have ended: false skips it. */
  when?: string;
  /** Set when the task works in its own git worktree (its own worktree setting, else its agent's, else the defaults'). */
  worktree?: TaskWorktree;
  /** A for_each over a dependency's result: the runner makes its copies (see src/swarm/map.ts). */
  map?: MapSpec;
  /** A copy made by a for_each over a result: the task it is a copy of, and its place in the list. */
  copy_of?: { task: string; index: number };
  /** One round of a task in a loop: the task as written, and the round (from 1). */
  round_of?: { task: string; round: number; loop: string };
  /** Its workers get post_task, list_tasks and wait_tasks (its own post_tasks, else its agent's, else the defaults'). */
  post_tasks?: true;
  /** A task an agent posted while the run went on: which task posted it, how deep, and its prompt as posted (text only). */
  posted?: PostedOrigin;
}

/** Where a posted task comes from: the task whose worker posted it, and its depth (1 for a post by a file's task). */
export interface PostedOrigin {
  by: string;
  depth: number;
  /** The agent whose budget it counts to when its own agent has none: its poster's (or the one its poster counts to). */
  budget_agent?: string;
}

export interface ResolvedSwarmConfig {
  name: string;
  /** The config file (absolute), when loaded from one. */
  file?: string;
  /** The directory relative paths were resolved against. */
  base_dir: string;
  concurrency?: number;
  budget_usd?: number;
  /** False: tasks start whatever their agent's tasks cost. Absent: true. */
  budget_forecast?: boolean;
  /** From this percent of a plan window's use, no task starts until it resets. */
  plan_usage?: { pause_at: number };
  cache_stagger?: boolean;
  /** The peer MCP server for every worker (true), none (false); absent: for workers with another agent to reach. */
  peer_tools?: boolean;
  /** False: workers keep no session files. Absent: true. */
  session_persistence?: boolean;
  /** The most tasks agents may post (absent: DEFAULT_MAX_POSTED_TASKS). */
  max_posted_tasks?: number;
  /** How deep posts may nest (absent: DEFAULT_MAX_POST_DEPTH). */
  max_post_depth?: number;
  defaults: ResolvedDefaults;
  agents: Record<string, SwarmAgent>;
  tasks: ResolvedTask[];
  /** Groups of tasks that run in rounds (absent: none). */
  loops?: ResolvedLoop[];
  keep_worktrees: boolean;
  /** Where posted tasks' worktrees are made (see postedWorktree): set when a task may post and the defaults or an agent has `worktree`. */
  posts_repository?: PostsRepository;
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
 * runner uses. With `gaps`, `input` is what was salvaged of a config that
 * failed the schema: only the checks are of use then.
 */
export async function resolveSwarmConfig(
  input: SwarmConfig,
  context: { baseDir: string; file?: string; defaultName: string; gaps?: SalvageGaps },
): Promise<ConfigResult> {
  const { baseDir, gaps } = context;
  const allTaskNames = gaps?.allTaskNames ?? true;
  const directories = new Map<string, PathSegment[]>();
  const directory = (path: PathSegment[], value: string) => {
    const absolute = resolveConfigPath(baseDir, value);
    if (!directories.has(absolute)) directories.set(absolute, path);
    return absolute;
  };

  const agents = await resolveAgents(input, baseDir, directory);
  const expanded = expandTasks(input.tasks);
  const graph = resolveDependencies(expanded.tasks, { allTaskNames });
  const issues: ConfigIssue[] = [
    ...agents.issues,
    ...(await checkAgentReferences(input, agents.agents, agents.discovery, gaps?.agentNames ?? [])),
    ...expanded.issues,
    ...graph.issues,
  ];

  const { add_dirs: defaultDirs, plugin_dirs: pluginDirs, ...defaultSettings } = input.defaults ?? {};
  const file = (path: string) => resolveConfigPath(baseDir, path);
  const defaults: ResolvedDefaults = {
    ...withAbsolutePaths(defaultSettings, file),
    cwd: input.defaults?.cwd === undefined ? baseDir : directory(["defaults", "cwd"], input.defaults.cwd),
    ...(defaultDirs !== undefined && { add_dirs: defaultDirs.map((dir, index) => directory(["defaults", "add_dirs", index], dir)) }),
    ...(pluginDirs !== undefined && { plugin_dirs: pluginDirs.map((dir, index) => directory(["defaults", "plugin_dirs", index], dir)) }),
  };
  const tasks = expanded.tasks.map((task) => resolveTask(task, defaults, graph.dependsOn, directory, file));
  for (const [k, task] of tasks.entries()) {
    const { entry } = expanded.tasks[k]!;
    const agent = entry.agent === undefined ? undefined : Object.hasOwn(agents.agents, entry.agent) ? agents.agents[entry.agent] : undefined;
    if (postsTasks(entry, agent, defaults)) task.post_tasks = true;
  }

  const missingDirectories = await checkDirectories(directories, issues);
  // A task's agent may post tasks named at run time: they run as tasks of the file do, worktrees included.
  const posted = tasks.some((task) => task.post_tasks);
  const worktrees = await resolveWorktrees(expanded.tasks, tasks, agents.agents, defaults, { missingDirectories, posts: posted });
  issues.push(...worktrees.issues, ...checkResultUses(tasks, graph.uses, agents.agents, worktrees.wanted));
  issues.push(...checkBudgets(input, agents.agents));
  const byName = new Map(tasks.map((task) => [task.name, task]));
  const readTarget = (name: string) => {
    const task = byName.get(name);
    const agent = task?.agent === undefined ? undefined : own(agents.agents, task.agent);
    return task && { outputSchema: task.settings.output_schema ?? agent?.output_schema, inWorktree: worktrees.wanted.has(name) };
  };
  issues.push(...(await checkConditions(expanded.tasks, graph.dependsOn, readTarget, { allTaskNames })));
  const loops = await resolveLoops(input.loops ?? [], tasks, readTarget);
  issues.push(...loops.issues);

  const agentNames = [...new Set([...Object.keys(agents.agents), ...(gaps?.agentNames ?? [])])];
  const inLoops = new Set(loops.loops.flatMap((loop) => loop.tasks));
  // A key that names no task of the file may name a posted one.
  const rehearsal = rehearsalByTask(input.rehearsal ?? {}, tasks, { agentNames, allTaskNames }, { inLoops, posted }, issues);
  if (issues.length > 0) return { ok: false, errors: issues };
  const resolved = { defaults, agents: agents.agents, tasks, loops: loops.loops, rehearsal, posts_repository: worktrees.posted };
  return { ok: true, config: assembleConfig(input, context, resolved) };
}

/** Each directory the config names that is not one is an issue, at the first place that names it; returns those directories. */
async function checkDirectories(directories: ReadonlyMap<string, PathSegment[]>, issues: ConfigIssue[]): Promise<Set<string>> {
  const missing = new Set<string>();
  for (const [absolute, path] of directories) {
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) issues.push(issue(path, `directory not found: ${absolute}`));
    else if (!info.isDirectory()) issues.push(issue(path, `not a directory: ${absolute}`));
    if (info?.isDirectory() !== true) missing.add(absolute);
  }
  return missing;
}

/** The config a runner uses: the settings as written, beside the parts resolved. */
function assembleConfig(
  input: SwarmConfig,
  context: { baseDir: string; file?: string; defaultName: string },
  resolved: Pick<ResolvedSwarmConfig, "defaults" | "agents" | "tasks" | "rehearsal" | "posts_repository"> & { loops: ResolvedLoop[] },
): ResolvedSwarmConfig {
  const { loops, posts_repository } = resolved;
  return {
    name: input.name ?? context.defaultName,
    ...(context.file !== undefined && { file: context.file }),
    base_dir: context.baseDir,
    ...(input.concurrency !== undefined && { concurrency: input.concurrency }),
    ...(input.budget_usd !== undefined && { budget_usd: input.budget_usd }),
    ...(input.budget_forecast !== undefined && { budget_forecast: input.budget_forecast }),
    ...(input.plan_usage !== undefined && { plan_usage: input.plan_usage }),
    ...(input.cache_stagger !== undefined && { cache_stagger: input.cache_stagger }),
    ...(input.peer_tools !== undefined && { peer_tools: input.peer_tools }),
    ...(input.max_posted_tasks !== undefined && { max_posted_tasks: input.max_posted_tasks }),
    ...(input.max_post_depth !== undefined && { max_post_depth: input.max_post_depth }),
    session_persistence: input.session_persistence,
    defaults: resolved.defaults,
    agents: resolved.agents,
    tasks: resolved.tasks,
    ...(loops.length > 0 && { loops }),
    keep_worktrees: input.keep_worktrees ?? false,
    ...(posts_repository !== undefined && { posts_repository }),
    hooks: input.hooks ?? {},
    connections: input.connections ?? {},
    rehearsal: resolved.rehearsal,
  };
}

function resolveTask(
  task: ExpandedTask,
  defaults: ResolvedDefaults,
  dependsOn: Map<string, string[]>,
  directory: (path: PathSegment[], value: string) => string,
  file: (path: string) => string,
): ResolvedTask {
  const { entry } = task;
  // Not the orchestrator's default time limit: that would cover the workers a task spawns too.
  const timeout = entry.timeout_s ?? defaults.timeout_s;
  const settings: TaskSettings = {
    ...(entry.output_schema !== undefined && { output_schema: entry.output_schema }),
    ...(entry.mcp_servers !== undefined && { mcp_servers: entry.mcp_servers }),
    ...(entry.permissions !== undefined && { permissions: entry.permissions }),
    ...(entry.env !== undefined && { env: entry.env }),
    ...(entry.add_dirs !== undefined && { add_dirs: entry.add_dirs.map((dir, k) => directory(["tasks", task.index, "add_dirs", k], dir)) }),
    ...withAbsolutePaths(controlsOf(entry), file),
  };
  return {
    name: task.name,
    template: task.template,
    index: task.index,
    ...(task.item !== undefined && { item: task.item }),
    ...(entry.agent !== undefined && { agent: entry.agent }),
    prompt: task.prompt,
    depends_on: dependsOn.get(task.name) ?? [],
    ...(entry.model !== undefined && { model: entry.model }),
    ...(timeout !== undefined && { timeout_s: timeout }),
    ...(task.cwd !== undefined && { cwd: directory(["tasks", task.index, "cwd"], task.cwd) }),
    ...(entry.retries !== undefined && { retries: entry.retries }),
    priority: entry.priority,
    ...(entry.budget_usd !== undefined && { budget_usd: entry.budget_usd }),
    ...(entry.when !== undefined && { when: entry.when }),
    settings,
    ...(task.map !== undefined && { map: task.map }),
  };
}

/** Whether a task's workers may post tasks: its own post_tasks, else its agent's, else the defaults'. */
export function postsTasks(task: { post_tasks?: boolean }, agent: { post_tasks?: boolean } | undefined, defaults: { post_tasks?: boolean }): boolean {
  return task.post_tasks ?? agent?.post_tasks ?? defaults.post_tasks ?? false;
}

/** A task's budget over its agent's (or the run's) could never be spent: the smaller one stops it first. */
function checkBudgets(input: SwarmConfig, agents: Record<string, SwarmAgent>): ConfigIssue[] {
  return input.tasks.flatMap((task, index) => {
    if (task.budget_usd === undefined) return [];
    const agentUsd = task.agent === undefined ? undefined : own(agents, task.agent)?.budget_usd;
    const path = ["tasks", index, "budget_usd"];
    if (agentUsd !== undefined && task.budget_usd > agentUsd)
      return [
        issue(
          path,
          `$${task.budget_usd} is more than its agent "${task.agent}" may spend ($${agentUsd}); lower it or raise agents.${task.agent}.budget_usd`,
        ),
      ];
    if (input.budget_usd !== undefined && task.budget_usd > input.budget_usd)
      return [issue(path, `$${task.budget_usd} is more than the whole run may spend ($${input.budget_usd}); lower it or raise budget_usd`)];
    return [];
  });
}

/** {{results.x.structured…}} needs x to have an output schema; {{results.x.branch}} and .commit need x in a worktree. */
function checkResultUses(
  tasks: ResolvedTask[],
  uses: Map<string, ResultUse[]>,
  agents: Record<string, SwarmAgent>,
  inWorktrees: ReadonlySet<string>,
): ConfigIssue[] {
  const byName = new Map(tasks.map((task) => [task.name, task]));
  const issues = new Map<string, ConfigIssue>();
  for (const task of tasks) {
    for (const use of uses.get(task.name) ?? []) {
      const target = byName.get(use.target);
      if (target === undefined) continue;
      const agent = target.agent === undefined ? undefined : own(agents, target.agent);
      let problem: ConfigIssue | undefined;
      if (use.field === "structured" && (target.settings.output_schema ?? agent?.output_schema) === undefined) {
        problem = issue(use.path, `task "${use.target}" has no output_schema, so its result has no structured output`);
      } else if (use.field === "all" && target.map === undefined) {
        problem = issue(use.path, `{{results.${use.target}.all}}: only a for_each over a result has "all" (its copies)`, "read .text or .structured");
      } else if ((use.field === "branch" || use.field === "commit") && !inWorktrees.has(target.name)) {
        problem = issue(use.path, `task "${use.target}" does not run in a worktree, so its result has no ${use.field}`, "give it worktree: true");
      }
      if (problem !== undefined) issues.set(`${problem.path}\n${problem.message}`, problem);
    }
  }
  return [...issues.values()];
}

/** A worker a task spawns ("/child"), and the subagents of its session (":subagent": Agent, a workflow's agents; see the rehearsal server). */
const CHILD_SUFFIX = /(\/child|:subagent)+$/;

function rehearsalByTask(
  scripts: Record<string, RehearsalScript>,
  tasks: ResolvedTask[],
  { agentNames, allTaskNames }: SalvageGaps,
  { inLoops, posted }: { inLoops: ReadonlySet<string>; posted: boolean },
  issues: ConfigIssue[],
): Record<string, RehearsalScript> {
  const byTask: Record<string, RehearsalScript> = {};
  const names = new Set(tasks.map((task) => task.name));
  const templates = new Set(tasks.map((task) => task.template));
  const copyPatterns = tasks.flatMap((task) => (task.map === undefined ? [] : [patternOf(task.map.copy_name)]));
  for (const [key, script] of Object.entries(scripts)) {
    // Workers that are not tasks play scripts named after their role and agent ("peer:<agent>", "supervisor:<agent>").
    const agent = parseAgentScriptName(key)?.agent;
    // A worker a task spawns (spawn_worker) is named "<task>/child", its own child "<task>/child/child".
    const spawner = key.replace(CHILD_SUFFIX, "");
    // A round of a loop task ("review#2") plays its own script when it has one.
    const round = roundBase(spawner);
    const unknownTask = !names.has(spawner) && !templates.has(spawner);
    if ((round !== undefined && inLoops.has(round)) || copyPatterns.some((pattern) => pattern.test(spawner))) {
      // A round's own script, or one copy's of a for_each over a result ("fix-1"): names made at run time.
      byTask[key] = script;
    } else if (agent === undefined && posted && unknownTask) {
      // The script of a task an agent will post under this name.
      byTask[key] = script;
    } else if (agent !== undefined) {
      if (agentNames.includes(agent)) byTask[key] = script;
      else issues.push(issue(["rehearsal", key], `unknown agent "${agent}"`, didYouMean(agent, agentNames)));
    } else if (allTaskNames && unknownTask) {
      const hint =
        didYouMean(spawner, [...names, ...templates]) ??
        'keys are task names, "<task>/child", "<task>:subagent", "peer:<agent>" or "supervisor:<agent>"';
      issues.push(issue(["rehearsal", key], `unknown task "${spawner}"`, hint));
    }
  }
  const children = Object.keys(scripts).map((key) => CHILD_SUFFIX.exec(key)?.[0]);
  for (const task of tasks) {
    // A script for this very task wins over one for its for_each group; so do its children's.
    for (const suffix of new Set(["", ...children.filter((child) => child !== undefined)])) {
      const script = own(scripts, task.name + suffix) ?? own(scripts, task.template + suffix);
      if (script !== undefined) byTask[task.name + suffix] = script;
      // The copies of a for_each over a result are named at run time: the rehearsal rig matches them by this pattern.
      if (script !== undefined && task.map !== undefined) byTask[task.map.copy_name + suffix] = script;
    }
  }
  return byTask;
}
