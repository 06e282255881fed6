/** Swarm files: the schema, loading with path-precise issues, agent files, worktrees and runSwarm. */

export type { DiscoveredAgent } from "./agents/discover.ts";
export { agentSearchDirs, discoverAgents, SHIPPED_SCOPE } from "./agents/discover.ts";

export type { PostedOrigin, ResolvedSwarmConfig, ResolvedTask } from "./config/index.ts";
export { ConfigError, loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor } from "./config/index.ts";
export { formatIssue } from "./config/issues.ts";
export type { TaskFingerprint } from "./fingerprint.ts";
export { olderSettingsHash } from "./fingerprint.ts";
export { findRepository, type RepositoryCheck } from "./git.ts";
export type { LoopEndedEvent } from "./loop.ts";
export { copiesMayTake, hasAgent, type PostedTaskInput, postedTask, postLimits } from "./posted.ts";
export { missingScripts } from "./rehearsal.ts";
export type { AddedTask, CarryDecision, PostIntake, RunSwarmOptions, SwarmEvent, TaskSettledEvent } from "./runner.ts";
export { INTERRUPTED, newRunId, runSwarm, skippedOnPurpose, unrunResult } from "./runner.ts";
export type { LeftWorktree, OpenWorktree, WorktreeOutcome } from "./worktree.ts";
export { RunWorktrees, WorktreeError } from "./worktree.ts";
