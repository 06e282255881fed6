// Replays a recorded workflow script's run to its end and resolves with its record: the library form of `cadre replay` for scripts.
import { runWorkflow, type WorkflowFileRunOptions, type WorkflowRunResult } from "../workflow-run.ts";
import { planWorkflowReplay, type WorkflowReplayPlanOptions } from "./plan.ts";

export interface ReplayWorkflowOptions
  extends WorkflowReplayPlanOptions,
    Omit<WorkflowFileRunOptions, "replay" | "rehearsal" | "resume" | "redis" | "file" | "args"> {}

/**
 * Replays the workflow run recorded in `runDir` (planWorkflowReplay): the
 * same script, args, budgets and agent limit as recorded (a budget or limit
 * given here replaces the recorded one), with the real CLI against the
 * recorded replies. Resolves as runWorkflow does; the record's
 * `replay.divergences` say where an agent left the record, and a divergence
 * makes the exit code 1 even when the script returned.
 */
export async function replayWorkflow(runDir: string, options: ReplayWorkflowOptions): Promise<WorkflowRunResult> {
  const { script, overrides, inPlace, args, ...run } = options;
  const plan = await planWorkflowReplay(runDir, {
    ...(script !== undefined && { script }),
    ...("args" in options && { args }),
    ...(overrides !== undefined && { overrides }),
    ...(inPlace !== undefined && { inPlace }),
    ...(run.cwd !== undefined && { cwd: run.cwd }),
  });
  return runWorkflow(plan.source, {
    ...run,
    file: plan.file,
    args: plan.args,
    budgetTokens: run.budgetTokens ?? plan.budgetTokens,
    budgetUsd: run.budgetUsd ?? plan.budgetUsd,
    maxAgents: run.maxAgents ?? plan.maxAgents,
    replay: plan,
  });
}
