// A task an agent posted, as a task of the swarm's graph: the config's defaults and the named agent, worktree included, nothing more.

import { patternOf } from "../rehearsal/index.ts";
import {
  DEFAULT_MAX_POST_DEPTH,
  DEFAULT_MAX_POSTED_TASKS,
  type PostedOrigin,
  postedWorktree,
  postsTasks,
  type ResolvedSwarmConfig,
  type ResolvedTask,
} from "./config/index.ts";

/** What a run made of a post: its name (checked), its prompt as text, its agent (one of the config's), the posted tasks it waits on. */
export interface PostedTaskInput {
  name: string;
  prompt: string;
  agent?: string;
  depends_on: string[];
  posted: PostedOrigin;
}

/** The limits on posts a config sets, with their defaults. */
export function postLimits(config: ResolvedSwarmConfig): { maxPosted: number; maxDepth: number } {
  return { maxPosted: config.max_posted_tasks ?? DEFAULT_MAX_POSTED_TASKS, maxDepth: config.max_post_depth ?? DEFAULT_MAX_POST_DEPTH };
}

/** Whether the config's agent of this name exists (its own key: a posted name is a model's text). */
export function hasAgent(config: ResolvedSwarmConfig, agent: string): boolean {
  return Object.hasOwn(config.agents, agent);
}

/**
 * The for_each over a result whose copies, named as its items say once its list is known, may take `name`; or
 * undefined. A copy name of placeholders alone ("{{item}}") may be any name, and so keeps none.
 */
export function copiesMayTake(config: ResolvedSwarmConfig, name: string): string | undefined {
  const keeps = (template: string) => template.replaceAll(/\{\{[^{}]*\}\}/g, "") !== "" && patternOf(template).test(name);
  return config.tasks.find((task) => task.map !== undefined && keeps(task.map.copy_name))?.name;
}

/**
 * A posted task as the graph runs it: its worker settings are its agent's and
 * the defaults' (a post sets none of its own), its prompt goes as text only
 * (never {{results}} filled in, never a slash command), and it may post in turn
 * when its agent or the defaults say so. It works in a worktree of its own
 * when its agent (or the defaults) has `worktree`, as a task of the file with
 * that agent would; its branch is named after it by RunWorktrees, which makes
 * any name a safe branch component and folder.
 */
export function postedTask(config: ResolvedSwarmConfig, input: PostedTaskInput): ResolvedTask {
  const agent = input.agent !== undefined && hasAgent(config, input.agent) ? config.agents[input.agent] : undefined;
  const timeout = config.defaults.timeout_s;
  const worktree = postedWorktree(agent === undefined ? undefined : input.agent, config.agents, config.defaults, config.posts_repository);
  return {
    name: input.name,
    template: input.name,
    index: config.tasks.length,
    ...(agent !== undefined && { agent: input.agent }),
    prompt: input.prompt,
    prompt_computed: true,
    depends_on: input.depends_on,
    ...(timeout !== undefined && { timeout_s: timeout }),
    priority: 0,
    settings: {},
    ...(worktree !== undefined && { worktree }),
    ...(postsTasks({}, agent, config.defaults) && { post_tasks: true }),
    posted: input.posted,
  };
}
