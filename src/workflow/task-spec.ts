/** An agent() call as the orchestrator runs it: the one place its options become a task's settings. */
import type { TaskSpec } from "../orchestrator/index.ts";
import type { AgentCall } from "./calls.ts";

/**
 * Makes the directory an `isolation: 'worktree'` call works in, in its slot
 * (TaskSpec.prepareWorker): what runs the workflow supplies it, since cadre's
 * worktrees are the run's (the swarm layer's, below the run layer).
 */
export type IsolatedWorker = NonNullable<TaskSpec["prepareWorker"]>;

/**
 * The task for `call`, named `name` (its row in a record, its rehearsal script),
 * with its prompt framed. A call with `isolation: 'worktree'` works in the
 * directory `isolated` makes; without one such a call is refused.
 */
export function taskSpecForCall(call: AgentCall, name: string, prompt: string, signal: AbortSignal, isolated?: IsolatedWorker): TaskSpec {
  if (call.options.isolation === "worktree" && isolated === undefined) {
    throw new Error("agent(): isolation 'worktree' needs cadre's worktrees, which only `cadre run` and runWorkflow() give");
  }
  const worker: TaskSpec["worker"] = {
    ...(call.options.schema !== undefined && { jsonSchema: call.options.schema }),
    // The CLI's own flag: it reaches the API as output_config.effort.
    ...(call.options.effort !== undefined && { extraArgs: { effort: call.options.effort } }),
  };
  return {
    name,
    prompt,
    ...(call.options.agentType !== undefined && { agent: call.options.agentType }),
    ...(call.options.model !== undefined && { model: call.options.model }),
    ...(Object.keys(worker).length > 0 && { worker }),
    // The call's own budget is its task's: counted under the row's name, so each call has one of its own.
    ...(call.options.budgetUsd !== undefined && { budgetUsd: call.options.budgetUsd, budgetName: name }),
    ...(call.options.isolation === "worktree" && { prepareWorker: isolated }),
    signal,
  };
}
