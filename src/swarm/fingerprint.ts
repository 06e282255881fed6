import { createHash } from "node:crypto";
import { layerWorkerOptions, taskWorkerOptions } from "../orchestrator/compose.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig, type ResolvedTask, taskSpecFor } from "./config/index.ts";

/**
 * What a task's result depends on, as two short hashes: the prompt it was
 * sent (its dependencies' results filled in), and the settings its worker
 * ran with (agent, model, tools, cwd, limits, …). A resumed run keeps a
 * result only while both still match, and says which one changed.
 */
export interface TaskFingerprint {
  prompt: string;
  settings: string;
}

/** JSON with sorted keys, so equal settings hash alike whatever order they were written in. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

export function taskFingerprint(config: ResolvedSwarmConfig, task: ResolvedTask, prompt: string): TaskFingerprint {
  const options = orchestratorOptionsFor(config);
  const spec = taskSpecFor(task, prompt, new AbortController().signal);
  const agent = task.agent === undefined ? undefined : options.agents?.[task.agent];
  const worker = layerWorkerOptions({ defaults: options.defaults, agent, task: taskWorkerOptions(spec) });
  const settings = { worker, timeoutMs: spec.timeoutMs, retries: spec.retries, dependsOn: task.depends_on };
  return { prompt: hash(prompt), settings: hash(stableJson(settings)) };
}
