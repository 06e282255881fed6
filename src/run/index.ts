/** Running a plan end to end (a swarm file's graph, a workflow script), without a terminal: the engine, resume, the record. */

export { activityOf, backgroundLine, planWindowLine, resultLine, worktreeLine } from "./activity.ts";
export { askRun, RunNotReachableError, runListens } from "./control-client.ts";
export { ControlSocket, ControlSocketError, type SteerableRun } from "./control-socket.ts";
export { type ControlReply, type ControlRequest, controlSocketPath, SteerTextSchema } from "./control-wire.ts";
export type { EngineOptions, RunEngine } from "./engine.ts";
export type { PlanContext, PlanEvent, RunPlan, WorkflowRunEvent } from "./plan.ts";
export { backgroundTaskFromRecord, type SummaryBackgroundTask } from "./record/background-record.ts";
export { type LenientSummary, type ReadRecordOptions, readRecord, type UnreadRecord } from "./record/read.ts";
export type { RecordEvent } from "./record/recorder.ts";
export type { AgentSpend, Summary, SummarySession, SummaryTask } from "./record/schema.ts";
export { NO_AGENT, recordSpendByAgent, SUMMARY_FILE, SummarySchema, usageFromRecord } from "./record/schema.ts";
export {
  buildSummary,
  exitCodeFor,
  prepareOutDir,
  type RecordedPlan,
  RecordWriteError,
  type RunStop,
  type SummaryInput,
  writeSummarySync,
} from "./record/summary.ts";
export { RecordedWorkflowSchema, recordedWorkflowSettings, WorkflowRecordSchema } from "./record/workflow-fields.ts";
export { ReplayError } from "./replay/errors.ts";
export { applyOverrides, parseReplayOverrides, type ReplayOverrides } from "./replay/overrides.ts";
export {
  isWorkflowRecord,
  planReplay,
  planWorkflowReplay,
  type ReplayPlan,
  type ReplayPlanOptions,
  type WorkflowReplayPlan,
  type WorkflowReplayPlanOptions,
} from "./replay/plan.ts";
export { type ReplaySwarmFileOptions, replaySwarmFile } from "./replay/replay-swarm-file.ts";
export { type ReplayWorkflowOptions, replayWorkflow } from "./replay/replay-workflow.ts";
export { readRecordedReplies } from "./replay/scripts.ts";
export { latestRunOf, type PlaceRequest, placeRun, planResume, planWorkflowResume, ResumeError, type ResumePlan } from "./resume.ts";
export {
  CLAUDE_CODE_RUN_ID,
  type ClaudeCodeRun,
  latestContinuationOf,
  readClaudeCodeRun,
} from "./resume-claude-code.ts";
export { type RunChange, RunModel, type RunModelOptions } from "./run-model.ts";
export { type RowKind, type RowStatus, type RunRow, taskKey } from "./run-row.ts";
export { type RunSwarmFileOptions, runSwarmFile, type SwarmRunResult } from "./run-swarm-file.ts";
export { type RunEvent, SwarmRun, type SwarmRunOptions } from "./swarm-run.ts";
export { WorkflowPlan } from "./workflow-plan.ts";
export {
  runWorkflow,
  type StartedWorkflowRun,
  startWorkflowRun,
  type WorkflowFileRunOptions,
  type WorkflowRunResult,
  type WorkflowSummary,
} from "./workflow-run.ts";
