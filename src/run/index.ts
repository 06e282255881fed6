/** Running a swarm file end to end, without a terminal: the engine, resume, the record. */

export { activityOf, resultLine, worktreeLine } from "./activity.ts";
export type { EngineOptions, RunEngine } from "./engine.ts";
export { buildSummary, exitCodeFor, prepareOutDir, RecordWriteError, type RunStop, type SummaryInput, writeSummarySync } from "./record.ts";
export { ReplayError, type ReplayErrorCode } from "./replay/errors.ts";
export { applyOverrides, parseReplayOverrides, type ReplayOverrides, ReplayOverridesSchema } from "./replay/overrides.ts";
export { planReplay, type ReplayPlan, type ReplayPlanOptions } from "./replay/plan.ts";
export { type ReplaySwarmFileOptions, replaySwarmFile } from "./replay/replay-swarm-file.ts";
export { type RecordedReplies, readRecordedReplies } from "./replay/scripts.ts";
export { planResume, ResumeError, type ResumePlan, runDirWithId } from "./resume.ts";
export { type RunChange, RunModel, type RunModelOptions } from "./run-model.ts";
export { type PendingRequest, type Phase, type RowKind, type RowStatus, type RunRow, taskKey } from "./run-row.ts";
export { type RunSwarmFileOptions, runSwarmFile, type SwarmRunResult } from "./run-swarm-file.ts";
export { type RecordEvent, type RunEvent, SwarmRun, type SwarmRunOptions } from "./swarm-run.ts";
