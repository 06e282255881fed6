/** An agent() call as the orchestrator runs it: the one place its options become a task's settings. */
import type { TaskSpec } from "../orchestrator/index.ts";
import type { AgentCall } from "./calls.ts";

/**
 * The task for `call`, named `name` (its row in a record, its rehearsal script),
 * with its prompt framed. `isolation: 'worktree'` is refused here: cadre's
 * worktrees are not wired to workflow calls yet.
 */
export function taskSpecForCall(call: AgentCall, name: string, prompt: string, signal: AbortSignal): TaskSpec {
  if (call.options.isolation === "worktree") throw new Error("agent(): isolation 'worktree' is not available in cadre yet");
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
    signal,
  };
}
