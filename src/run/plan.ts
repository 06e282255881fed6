// What the run layer drives: a plan that hands its tasks to a task runner and tells, as events, what became of them.
import type { BudgetUse, TaskRunner } from "../orchestrator/index.ts";
import { type ResolvedSwarmConfig, type RunSwarmOptions, type RunWorktrees, runSwarm, type SwarmEvent } from "../swarm/index.ts";
import type { WorkflowEvent } from "../workflow/index.ts";
import type { RecordExtension, RecordedPlan } from "./record/summary.ts";

/** What a plan is given to run with: the engine's runner, the run's stop, its worktrees, a resumed run's carry-over, and the budgets in force. */
export type PlanContext = Omit<RunSwarmOptions, "config" | "orchestrator"> & {
  runner: TaskRunner;
  /** The run's worktrees: the run disposes of them (and discards them when it is killed). */
  worktrees: RunWorktrees;
  /** The dollar budgets over work of an agent (the run's, the agent's), with their use now (none: no budget applies). */
  budgetStatus: (agent: string | undefined) => BudgetUse[];
};

/** A workflow event as a run tells it: an agent call's events name its task (the row's name). */
export type WorkflowRunEvent =
  | Exclude<WorkflowEvent, { type: "agent_started" | "agent_ended" }>
  | (Extract<WorkflowEvent, { type: "agent_started" | "agent_ended" }> & { name: string });

/** What a plan tells as it runs: the swarm's task events (the record's input), and a script's own events beside them. */
export type PlanEvent = SwarmEvent | WorkflowRunEvent;

/**
 * A kind of plan the run layer can drive (see docs/ARCHITECTURE.md, "Kinds
 * of plan"). SwarmRun starts the engine, keeps the record and the journal,
 * resumes and reports; the plan only decides what runs when. Its task events
 * are SwarmEvents: a task_ready before a task is handed to the runner, one
 * task_settled per task, tasks_added for tasks made as it goes, so the
 * recorder, the read-model, the views, the dashboard and telemetry read one
 * vocabulary; a plan's own events (a script's phases, logs, result) go beside.
 */
export interface RunPlan {
  /** What the record lists before anything runs (a plan that makes all its tasks as it goes lists none). */
  readonly outline: RecordedPlan;
  /** Runs the plan to its end: the stream ends once every task it made has settled. */
  run(context: PlanContext): AsyncIterable<PlanEvent>;
  /** What the plan adds to its record (a workflow's calls and result). */
  readonly record?: RecordExtension;
}

/** A swarm file's graph as a plan: runSwarm over its tasks, maps and loops. */
export function swarmPlan(config: ResolvedSwarmConfig): RunPlan {
  return {
    outline: config,
    run: ({ runner, budgetStatus: _, ...context }) => runSwarm({ ...context, config, orchestrator: runner }),
  };
}
