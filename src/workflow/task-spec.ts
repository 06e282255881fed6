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
 * The agent types Claude Code has built in, which a call may name without an agent file: its worker's main
 * thread runs as that agent (the CLI's `--agent`), with the CLI's own prompt and tools for it. An agent file of
 * the same name wins, as it does in the CLI.
 */
export const BUILT_IN_AGENT_TYPES: ReadonlySet<string> = new Set(["general-purpose", "Explore", "Plan"]);

/** The options of agent() that change nothing of its task's settings: a call with no others is a plain call. */
export const SETTINGS_FREE_OPTIONS: ReadonlySet<string> = new Set(["label", "phase"]);

/**
 * The task for `call`, named `name` (its row in a record, its rehearsal script),
 * with its prompt framed. A call with `isolation: 'worktree'` works in the
 * directory `isolated` makes; without one such a call is refused.
 */
export function taskSpecForCall(
  call: Pick<AgentCall, "options">,
  name: string,
  prompt: string,
  signal?: AbortSignal,
  isolated?: IsolatedWorker,
  agentFiles: ReadonlySet<string> = new Set(),
): TaskSpec {
  if (call.options.isolation === "worktree" && isolated === undefined) {
    throw new Error("agent(): isolation 'worktree' needs cadre's worktrees, which only `cadre run` and runWorkflow() give");
  }
  const { agentType } = call.options;
  const builtIn = agentType !== undefined && !agentFiles.has(agentType) && BUILT_IN_AGENT_TYPES.has(agentType);
  const worker: TaskSpec["worker"] = {
    ...(builtIn && { agent: agentType }),
    ...(call.options.schema !== undefined && { jsonSchema: call.options.schema }),
    ...(call.options.effort !== undefined && { effort: call.options.effort }),
  };
  return {
    name,
    prompt,
    ...(agentType !== undefined && !builtIn && { agent: agentType }),
    ...(call.options.model !== undefined && { model: call.options.model }),
    ...(Object.keys(worker).length > 0 && { worker }),
    // The call's own budget is its task's: counted under the row's name, so each call has one of its own.
    ...(call.options.budgetUsd !== undefined && { budgetUsd: call.options.budgetUsd, budgetName: name }),
    ...(call.options.isolation === "worktree" && { prepareWorker: isolated }),
    ...(signal !== undefined && { signal }),
  };
}

/**
 * A plain call's task (see SETTINGS_FREE_OPTIONS) before the script makes one: what a run prepares a process for
 * while its sandbox loads (Orchestrator.prepare), which the script's first plain call then takes.
 */
export function plainCallSpec(): TaskSpec {
  return taskSpecForCall({ options: {} }, "agent", "a plain agent() call");
}
