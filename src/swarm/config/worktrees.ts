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

/** The worktree setting that applies to a task (its own, else its agent's, else the defaults'), and where it was written. */
function settingFor(
  task: ExpandedTask,
  agent: SwarmAgent | undefined,
  defaults: WorktreeSetting | undefined,
): { setting: WorktreeSetting; path: PathSegment[] } | undefined {
  if (task.entry.worktree !== undefined) return { setting: task.entry.worktree, path: ["tasks", task.index, "worktree"] };
  if (agent?.worktree !== undefined) return { setting: agent.worktree, path: ["agents", task.entry.agent ?? "", "worktree"] };
  if (defaults !== undefined) return { setting: defaults, path: ["defaults", "worktree"] };
  return undefined;
}

/** What resolveWorktrees reads of a resolved task, and the `worktree` it sets. */
interface WorktreeCandidate {
  name: string;
  agent?: string;
  cwd?: string;
  worktree?: TaskWorktree;
}

/**
 * Decides which tasks work in a worktree and sets their `worktree`; each such
 * task's directory must be inside a git repository with a commit. Returns
 * the names of the tasks that asked for one, and the issues, once per place
 * they were written.
 */
export async function resolveWorktrees(
  expanded: ExpandedTask[],
  tasks: WorktreeCandidate[],
  agents: Record<string, SwarmAgent>,
  defaults: { worktree?: WorktreeSetting; cwd: string },
  missingDirectories: ReadonlySet<string>,
): Promise<{ wanted: Set<string>; issues: ConfigIssue[] }> {
  const wanted = new Set<string>();
  const issues = new Map<string, ConfigIssue>();
  const add = (item: ConfigIssue) => issues.set(`${item.path}\n${item.message}`, item);
  const repositories = new Map<string, Promise<RepositoryCheck>>();

  for (const [k, task] of tasks.entries()) {
    const source = expanded[k]!;
    const found = settingFor(source, task.agent === undefined ? undefined : own(agents, task.agent), defaults.worktree);
    if (found === undefined || found.setting === false) continue;
    wanted.add(task.name);
    const base = source.entry.worktree !== undefined ? source.worktree_base : typeof found.setting === "object" ? found.setting.base : undefined;
    if (source.entry.worktree === undefined && base?.includes("{{") === true) {
      add(issue([...found.path, "base"], "placeholders in worktree.base are filled in only when a task sets it", "set worktree.base on the task"));
    }
    const dir = task.cwd ?? defaults.cwd;
    if (missingDirectories.has(dir)) continue;
    let check = repositories.get(dir);
    if (check === undefined) {
      check = findRepository(dir);
      repositories.set(dir, check);
    }
    const repository = await check;
    if (!repository.ok) {
      add(issue(found.path, `worktree needs a git repository: ${repository.reason}`, "run git init and commit there, or leave worktree out"));
      continue;
    }
    task.worktree = { repo: repository.root, start: repository.head, ...(base !== undefined && { base }) };
  }
  return { wanted, issues: [...issues.values()] };
}
