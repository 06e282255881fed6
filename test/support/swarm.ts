import { layerWorkerOptions, taskWorkerOptions } from "../../src/orchestrator/compose.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig, type ResolvedTask, taskSpecFor } from "../../src/swarm/config/index.ts";
import type { WorkerOptions } from "../../src/worker/index.ts";

/** The options a task's worker starts with: the config converted at its edge, then layered by the orchestrator. */
export function workerOf(config: ResolvedSwarmConfig, task: ResolvedTask): WorkerOptions {
  const options = orchestratorOptionsFor(config);
  const spec = taskSpecFor(task, task.prompt, new AbortController().signal);
  const agent = spec.agent === undefined ? undefined : options.agents?.[spec.agent];
  return layerWorkerOptions({ defaults: options.defaults, agent, task: taskWorkerOptions(spec) });
}
