// What the run layer drives: a plan that hands its tasks to a task runner and tells, as events, what became of them.
import type { TaskRunner } from "../orchestrator/index.ts";
import { type ResolvedSwarmConfig, type RunSwarmOptions, runSwarm, type SwarmEvent } from "../swarm/index.ts";
import type { RecordedPlan } from "./record/summary.ts";

/** What a plan is given to run with: the engine's runner, the run's stop, its worktrees, and a resumed run's carry-over. */
export type PlanContext = Omit<RunSwarmOptions, "config" | "orchestrator"> & { runner: TaskRunner };

/**
 * A kind of plan the run layer can drive (see docs/ARCHITECTURE.md, "A second
 * kind of plan"). SwarmRun starts the engine, keeps the record and the
 * journal, resumes and reports; the plan only decides what runs when. Its
 * events are SwarmEvents: a task_ready before a task is handed to the runner,
 * one task_settled per task, tasks_added for tasks made as it goes, so the
 * recorder, the read-model, the views, the dashboard and telemetry need
 * nothing of the plan's own.
 */
export interface RunPlan {
  /** What the record lists before anything runs (a plan that makes all its tasks as it goes lists none). */
  readonly outline: RecordedPlan;
  /** Runs the plan to its end: the stream ends once every task it made has settled. */
  run(context: PlanContext): AsyncIterable<SwarmEvent>;
}

/** A swarm file's graph as a plan: runSwarm over its tasks, maps and loops. */
export function swarmPlan(config: ResolvedSwarmConfig): RunPlan {
  return { outline: config, run: ({ runner, ...context }) => runSwarm({ ...context, config, orchestrator: runner }) };
}
