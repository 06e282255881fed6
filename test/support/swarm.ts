// Swarm configs in tests: the issues one is rejected with, its tasks' worker options, configs, results and events made by hand.
import { fileURLToPath } from "node:url";
import { layerWorkerOptions, taskWorkerOptions } from "../../src/orchestrator/compose.ts";
import type { TaskResult } from "../../src/orchestrator/index.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig, type ResolvedTask, taskSpecFor } from "../../src/swarm/config/index.ts";
import type { ConfigIssue } from "../../src/swarm/config/issues.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import type { SwarmEvent, TaskSettledEvent } from "../../src/swarm/index.ts";
import type { WorkerOptions } from "../../src/worker/index.ts";

/** test/fixtures/config/: the files a config under test may name. */
export const FIXTURE_CONFIGS = fileURLToPath(new URL("../fixtures/config/", import.meta.url));

/** The issues a config (its text, or its lines) is rejected with; paths in it are relative to `baseDir` (test/fixtures/config/). */
export async function errorsOf(config: string | string[], options: { baseDir?: string; format?: "yaml" | "json" } = {}): Promise<ConfigIssue[]> {
  const text = Array.isArray(config) ? config.join("\n") : config;
  const result = await parseSwarmConfig(text, { baseDir: options.baseDir ?? FIXTURE_CONFIGS, format: options.format, env: {} });
  if (result.ok) throw new Error("expected the config to be rejected");
  return result.errors;
}

/** The options a task's worker starts with: the config converted at its edge, then layered by the orchestrator. */
export function workerOf(config: ResolvedSwarmConfig, task: ResolvedTask): WorkerOptions {
  const options = orchestratorOptionsFor(config);
  const spec = taskSpecFor(task, task.prompt, new AbortController().signal);
  const agent = spec.agent === undefined ? undefined : options.agents?.[spec.agent];
  return layerWorkerOptions({ defaults: options.defaults, agent, task: taskWorkerOptions(spec) });
}

/** A resolved config of tasks with no dependencies, as the loader would make it from a file in /x. */
export function resolvedConfig(name: string, taskNames: readonly string[], extra: Partial<ResolvedSwarmConfig> = {}): ResolvedSwarmConfig {
  return {
    name,
    base_dir: "/x",
    defaults: { cwd: "/x" },
    agents: {},
    hooks: {},
    connections: {},
    rehearsal: {},
    keep_worktrees: false,
    tasks: taskNames.map((task, index) => ({
      name: task,
      template: task,
      index,
      prompt: "p",
      depends_on: [],
      cwd: "/x",
      retries: 0,
      priority: 0,
      settings: {},
    })),
    ...extra,
  } as ResolvedSwarmConfig;
}

/** When the tasks of `result` started, less half a second. */
export const T0 = Date.parse("2025-06-01T12:00:00Z");

/** A task's result as the orchestrator gives it (the one builder of the tests): a run of 4.2 s after 0.5 s in the queue, two turns. */
export function result(name: string, status: TaskResult["status"], extra: Partial<TaskResult> = {}): TaskResult {
  return {
    id: name,
    name,
    agent: "reviewer",
    status,
    text: status === "succeeded" ? `${name} is fine` : "",
    structuredOutput: undefined,
    costUsd: 0.0125,
    usage: { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    numTurns: 2,
    queuedMs: 500,
    startedAt: T0 + 500,
    finishedAt: T0 + 4700,
    durationMs: 4200,
    attempts: 1,
    sessionId: "s",
    error: status === "failed" ? { code: "TASK_FAILED", message: "API error 400" } : undefined,
    ...extra,
  };
}

/** The task_settled events among a run's events. */
export function settledOf(events: readonly SwarmEvent[]): TaskSettledEvent[] {
  return events.filter((event): event is TaskSettledEvent => event.type === "task_settled");
}
