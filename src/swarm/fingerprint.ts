// What a task's result depends on, as short hashes: a resumed run keeps a result only while they are unchanged.
import { createHash } from "node:crypto";
import { layerWorkerOptions, taskWorkerOptions } from "../orchestrator/index.ts";
import { own } from "../util/own.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig, type ResolvedTask, taskSpecFor } from "./config/index.ts";

/**
 * What a task's result depends on, as short hashes: the prompt it was sent
 * (its dependencies' results filled in), the settings its worker ran with
 * (agent, model, tools, cwd, …; not its time limit or retries, which cannot
 * change a result it has), the prompt as written, and each dependency's
 * result. A resumed run keeps a result only while the prompt and settings
 * still match, and says precisely what changed.
 */
export interface TaskFingerprint {
  prompt: string;
  settings: string;
  /** The prompt as written, before results are filled in (absent from older records). */
  template?: string;
  /** Each dependency's result, by task name (absent from older records). */
  inputs?: Record<string, string>;
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

/** The worker settings a task runs with, and its task spec. */
function settingsOf(config: ResolvedSwarmConfig, task: ResolvedTask, prompt: string) {
  const options = orchestratorOptionsFor(config);
  const spec = taskSpecFor(task, prompt, new AbortController().signal);
  const agent = task.agent === undefined ? undefined : own(options.agents, task.agent);
  return { spec, worker: layerWorkerOptions({ defaults: options.defaults, agent, task: taskWorkerOptions(spec) }) };
}

/** `inputs`: what each dependency's result gives the task (its text, structured output, branch). */
export function taskFingerprint(
  config: ResolvedSwarmConfig,
  task: ResolvedTask,
  prompt: string,
  inputs: Record<string, unknown> = {},
): TaskFingerprint {
  const { worker } = settingsOf(config, task, prompt);
  return {
    prompt: hash(prompt),
    settings: hash(stableJson({ worker, dependsOn: task.depends_on })),
    template: hash(task.prompt),
    inputs: Object.fromEntries(Object.entries(inputs).map(([name, fields]) => [name, hash(stableJson(fields))])),
  };
}

/**
 * The settings hash of records written before fingerprints had a `template`:
 * it also covered the time limit and retries. A resume compares such a
 * record against this, so an unchanged task of an older run is still kept.
 */
export function olderSettingsHash(config: ResolvedSwarmConfig, task: ResolvedTask): string {
  const { spec, worker } = settingsOf(config, task, task.prompt);
  return hash(stableJson({ worker, timeoutMs: spec.timeoutMs, retries: spec.retries, dependsOn: task.depends_on }));
}
