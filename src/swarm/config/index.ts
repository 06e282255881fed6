/** Swarm configs: the schema, loading with path-precise issues, and the resolved config a runner uses. */

export type { Hooks, Policy, SwarmHookMatcher } from "./hooks.ts";
export { ConfigError, type ConfigIssue, ConfigIssueSchema, formatIssue } from "./issues.ts";
export { renderSwarmJsonSchema, SWARM_SCHEMA_PATH, swarmJsonSchema } from "./json-schema.ts";
export { type ConfigFormat, loadSwarmConfig, loadSwarmConfigOrThrow, type ParseOptions, parseSwarmConfig } from "./load.ts";
export { orchestratorOptionsFor, taskSpecFor } from "./orchestrator-options.ts";
export type { ConfigResult, PostedOrigin, ResolvedDefaults, ResolvedSwarmConfig, ResolvedTask, TaskSettings } from "./resolve.ts";
export { postsTasks } from "./resolve.ts";
export type { SwarmAgent } from "./resolve-agents.ts";
export {
  DEFAULT_MAX_POST_DEPTH,
  DEFAULT_MAX_POSTED_TASKS,
  type ForEachItem,
  type SwarmConfig,
  SwarmConfigSchema,
  type TaskConfig,
} from "./schema.ts";
export { fillResults, type ResultFields, resultReferences, usesResults } from "./template.ts";
export { type PostsRepository, postedWorktree, type TaskWorktree } from "./worktrees.ts";
