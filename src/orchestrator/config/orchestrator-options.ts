import type { ResolvedSwarmConfig, ResolvedTask } from "./resolve.ts";
import type { OrchestratorOptions, RoutedHook, TaskSpec } from "../types.ts";

/** Swarm-config agents (snake_case) as the orchestrator takes them. */
function agentsOf(config: ResolvedSwarmConfig): NonNullable<OrchestratorOptions["agents"]> {
  return Object.fromEntries(
    Object.entries(config.agents).map(([name, agent]) => [
      name,
      {
        description: agent.description,
        prompt: agent.prompt,
        ...(agent.tools && { tools: agent.tools }),
        ...(agent.disallowed_tools && { disallowedTools: agent.disallowed_tools }),
        ...(agent.model && { model: agent.model }),
        ...(agent.permission_mode && { permissionMode: agent.permission_mode }),
        ...(agent.reuse !== undefined && { reuse: agent.reuse }),
      },
    ]),
  );
}

function defaultsOf(config: ResolvedSwarmConfig): OrchestratorOptions["defaults"] {
  const d = config.defaults;
  return {
    cwd: d.cwd,
    ...(d.model && { model: d.model }),
    ...(d.permission_mode && { permissionMode: d.permission_mode }),
    ...(d.append_system_prompt && { appendSystemPrompt: d.append_system_prompt }),
    ...(d.allowed_tools && { allowedTools: d.allowed_tools }),
    ...(d.disallowed_tools && { disallowedTools: d.disallowed_tools }),
    ...(d.max_turns && { maxTurns: d.max_turns }),
  };
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
    ...(config.defaults.reuse !== undefined && { reuse: config.defaults.reuse }),
    agents,
    defaults: defaultsOf(config),
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
    cwd: task.cwd,
    ...(task.timeout_s !== undefined && { timeoutMs: task.timeout_s * 1000 }),
    retries: task.retries,
    priority: task.priority,
    worker: {
      ...(task.max_turns !== undefined && { maxTurns: task.max_turns }),
      ...(task.permission_mode !== undefined && { permissionMode: task.permission_mode }),
    },
    signal,
  };
}
