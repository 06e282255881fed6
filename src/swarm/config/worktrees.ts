// Where each task's git worktree comes from: its repository and base, checked when the config loads.

import { own } from "../../util/own.ts";
import { findRepository, type RepositoryCheck } from "../git.ts";
import type { ExpandedTask } from "./expand.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import type { SwarmAgent } from "./resolve-agents.ts";
import type { WorktreeSetting } from "./settings.ts";

/** Where a task's worktree comes from. */
export interface TaskWorktree {
  /** The top level of the repository the task's directory is in. */
  repo: string;
  /** The commit checked out there when the config was loaded: the default base. */
  start: string;
  /** The base as written (after {{item}}); {{results.…}} in it is filled in when the task starts. */
  base?: string;
}

/** Where posted tasks' worktrees come from: the repository of the run's directory, and its commit when the config was loaded. */
export type PostsRepository = Pick<TaskWorktree, "repo" | "start">;

type FoundSetting = { setting: WorktreeSetting; path: PathSegment[] };

/** The worktree setting a task of this agent inherits (its agent's, else the defaults'), and where it was written. */
function inheritedSetting(
  agentName: string | undefined,
  agent: SwarmAgent | undefined,
  defaults: WorktreeSetting | undefined,
): FoundSetting | undefined {
  if (agent?.worktree !== undefined) return { setting: agent.worktree, path: ["agents", agentName ?? "", "worktree"] };
  if (defaults !== undefined) return { setting: defaults, path: ["defaults", "worktree"] };
  return undefined;
}

/** The worktree setting that applies to a task (its own, else its agent's, else the defaults'), and where it was written. */
function settingFor(task: ExpandedTask, agent: SwarmAgent | undefined, defaults: WorktreeSetting | undefined): FoundSetting | undefined {
  if (task.entry.worktree !== undefined) return { setting: task.entry.worktree, path: ["tasks", task.index, "worktree"] };
  return inheritedSetting(task.entry.agent, agent, defaults);
}

/** The base an inherited setting gives (`worktree: { base }`); undefined: the commit checked out at load. */
function inheritedBase(setting: WorktreeSetting): string | undefined {
  return typeof setting === "object" ? setting.base : undefined;
}

/**
 * The worktree of a task posted as this agent (none: the defaults), exactly
 * as a task of the file with that agent and no worktree of its own would
 * have: its agent's setting, else the defaults'. Undefined when it works in
 * the run's directory. Synchronous: the repository was found when the config
 * was loaded (`posts`).
 */
export function postedWorktree(
  agent: string | undefined,
  agents: Record<string, SwarmAgent>,
  defaults: { worktree?: WorktreeSetting },
  posts: PostsRepository | undefined,
): TaskWorktree | undefined {
  const found = inheritedSetting(agent, agent === undefined ? undefined : own(agents, agent), defaults.worktree);
  if (found === undefined || found.setting === false || posts === undefined) return undefined;
  const base = inheritedBase(found.setting);
  return { ...posts, ...(base !== undefined && { base }) };
}

/** What resolveWorktrees reads of a resolved task, and the `worktree` it sets. */
interface WorktreeCandidate {
  name: string;
  agent?: string;
  cwd?: string;
  worktree?: TaskWorktree;
}

/** The issues of worktree settings, once per place they were written, and each directory's repository, looked up once. */
class WorktreeChecks {
  readonly #issues = new Map<string, ConfigIssue>();
  readonly #repositories = new Map<string, Promise<RepositoryCheck>>();

  /** The config's directories that are not there (each has its issue already): no repository is looked for in them. */
  readonly #missing: ReadonlySet<string>;

  constructor(missingDirectories: ReadonlySet<string>) {
    this.#missing = missingDirectories;
  }

  add(item: ConfigIssue): void {
    this.#issues.set(`${item.path}\n${item.message}`, item);
  }

  get issues(): ConfigIssue[] {
    return [...this.#issues.values()];
  }

  /** An inherited setting's base may not hold placeholders: only a task's own base has results to fill in. */
  checkInheritedBase(found: FoundSetting, base: string | undefined): void {
    if (base?.includes("{{") === true)
      this.add(
        issue([...found.path, "base"], "placeholders in worktree.base are filled in only when a task sets it", "set worktree.base on the task"),
      );
  }

  /** The repository a worktree of `dir` is made from, or undefined (an issue at the setting says why). */
  async repositoryOf(dir: string, found: FoundSetting): Promise<PostsRepository | undefined> {
    if (this.#missing.has(dir)) return undefined;
    let check = this.#repositories.get(dir);
    if (check === undefined) {
      check = findRepository(dir);
      this.#repositories.set(dir, check);
    }
    const repository = await check;
    if (repository.ok) return { repo: repository.root, start: repository.head };
    this.add(issue(found.path, `worktree needs a git repository: ${repository.reason}`, "run git init and commit there, or leave worktree out"));
    return undefined;
  }
}

/**
 * Decides which tasks work in a worktree and sets their `worktree`; each such
 * task's directory must be inside a git repository with a commit. With
 * `posts` (a task of the run may post), the same holds for the run's
 * directory when the defaults or an agent give a worktree to the tasks
 * posted as it: `posted` is then its repository (see postedWorktree).
 * Returns the names of the tasks that asked for one, and the issues, once
 * per place they were written.
 */
export async function resolveWorktrees(
  expanded: ExpandedTask[],
  tasks: WorktreeCandidate[],
  agents: Record<string, SwarmAgent>,
  defaults: { worktree?: WorktreeSetting; cwd: string },
  context: { missingDirectories: ReadonlySet<string>; posts: boolean },
): Promise<{ wanted: Set<string>; issues: ConfigIssue[]; posted?: PostsRepository }> {
  const wanted = new Set<string>();
  const checks = new WorktreeChecks(context.missingDirectories);
  for (const [k, task] of tasks.entries()) {
    const source = expanded[k]!;
    const found = settingFor(source, task.agent === undefined ? undefined : own(agents, task.agent), defaults.worktree);
    if (found === undefined || found.setting === false) continue;
    wanted.add(task.name);
    const ownSetting = source.entry.worktree !== undefined;
    const base = ownSetting ? source.worktree_base : inheritedBase(found.setting);
    if (!ownSetting) checks.checkInheritedBase(found, base);
    const repository = await checks.repositoryOf(task.cwd ?? defaults.cwd, found);
    if (repository !== undefined) task.worktree = { ...repository, ...(base !== undefined && { base }) };
  }
  const posted = context.posts ? await postsRepository(agents, defaults, checks) : undefined;
  return { wanted, issues: checks.issues, ...(posted !== undefined && { posted }) };
}

/** The repository of the run's directory, where posted tasks work, when the defaults or an agent give them a worktree. */
async function postsRepository(
  agents: Record<string, SwarmAgent>,
  defaults: { worktree?: WorktreeSetting; cwd: string },
  checks: WorktreeChecks,
): Promise<PostsRepository | undefined> {
  const settings = [undefined, ...Object.keys(agents)].flatMap((name) => {
    const found = inheritedSetting(name, name === undefined ? undefined : own(agents, name), defaults.worktree);
    return found === undefined || found.setting === false ? [] : [found];
  });
  let repository: PostsRepository | undefined;
  for (const found of settings) {
    checks.checkInheritedBase(found, inheritedBase(found.setting));
    repository = await checks.repositoryOf(defaults.cwd, found);
  }
  return repository;
}
