import type { OrchestratorOptions, RoutedHook, TaskSpec } from "../../orchestrator/types.ts";
import type { WorkerOptions } from "../../worker/index.ts";
import type { ResolvedSwarmConfig, ResolvedTask } from "./resolve.ts";

/**
 * The edge between the swarm config (snake_case, as people write it) and the
 * orchestrator (camelCase): the one place one becomes the other. Worker
 * settings pass through as written, each at its own layer (defaults, agent,
 * task); the orchestrator decides what wins (layerWorkerOptions).
 */

/** The worker settings a swarm file may give, as it spells them → as the orchestrator does. */
const WORKER_SETTINGS = {
  model: "model",
  permission_mode: "permissionMode",
  max_turns: "maxTurns",
  tools: "tools",
  disallowed_tools: "disallowedTools",
  allowed_tools: "allowedTools",
  append_system_prompt: "appendSystemPrompt",
  cwd: "cwd",
  fallback_model: "fallbackModel",
  betas: "betas",
  plugin_dirs: "pluginDirs",
} as const satisfies Record<string, keyof WorkerOptions>;

type WrittenSettings = { [K in keyof typeof WORKER_SETTINGS]?: WorkerOptions[(typeof WORKER_SETTINGS)[K]] };
type WorkerSettings = Partial<Pick<WorkerOptions, (typeof WORKER_SETTINGS)[keyof typeof WORKER_SETTINGS]>>;

/** The worker settings among `written` (defaults or an agent), renamed; the other keys stay behind. */
function workerSettings(written: WrittenSettings): WorkerSettings {
  const settings: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(WORKER_SETTINGS)) {
    const value = written[key as keyof WrittenSettings];
    if (value !== undefined) settings[name] = value;
  }
  return settings as WorkerSettings;
}

function agentsOf(config: ResolvedSwarmConfig): NonNullable<OrchestratorOptions["agents"]> {
  return Object.fromEntries(
    Object.entries(config.agents).map(([name, agent]) => [name, { description: agent.description, prompt: agent.prompt, ...workerSettings(agent) }]),
  );
}

function hooksOf(config: ResolvedSwarmConfig): OrchestratorOptions["hooks"] {
  const hooks: Record<string, RoutedHook[]> = {};
  for (const [event, entries] of Object.entries(config.hooks)) {
    hooks[event] = (entries ?? []).map((entry): RoutedHook => {
      const action = entry.policy
        ? { policy: entry.policy }
        : entry.command !== undefined
          ? { command: entry.command }
          : { supervisor: entry.supervisor! };
      return {
        ...action,
        ...(entry.matcher !== undefined && { matcher: entry.matcher }),
        ...(entry.timeout_s !== undefined && { timeoutMs: entry.timeout_s * 1000 }),
        onError: entry.on_error,
      };
    });
  }
  return Object.keys(hooks).length > 0 ? hooks : undefined;
}

/** The orchestrator a swarm config describes; the caller adds per-run settings (out dir, worker environment). */
export function orchestratorOptionsFor(config: ResolvedSwarmConfig): OrchestratorOptions {
  const agents = agentsOf(config);
  return {
    ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
    ...(config.budget_usd !== undefined && { budgetUsd: config.budget_usd }),
    ...(config.cache_stagger !== undefined && { cacheStagger: config.cache_stagger }),
    agents,
    defaults: { ...workerSettings(config.defaults), ...(config.session_persistence === false && { persistSession: false }) },
    hooks: hooksOf(config),
    // No connections means every agent may reach every other.
    connections: Object.keys(config.connections).length > 0 ? config.connections : undefined,
  };
}

/** One config task as the orchestrator runs it; `prompt` has its {{results.x}} filled in. */
export function taskSpecFor(task: ResolvedTask, prompt: string, signal: AbortSignal): TaskSpec {
  return {
    name: task.name,
    prompt,
    ...(task.agent !== undefined && { agent: task.agent }),
    ...(task.model !== undefined && { model: task.model }),
    ...(task.cwd !== undefined && { cwd: task.cwd }),
    ...(task.timeout_s !== undefined && { timeoutMs: task.timeout_s * 1000 }),
    retries: task.retries,
    priority: task.priority,
    signal,
  };
}
