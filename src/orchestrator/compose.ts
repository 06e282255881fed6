import type { HookConfig } from "../worker/hooks.ts";
import type { AgentDefinition, WorkerOptions } from "../worker/index.ts";
import type { ReuseOption } from "./types.ts";

/** An agent as the orchestrator runs it: what the CLI knows of an agent, the worker settings it brings, and whether its processes are reused. */
export type AgentSpec = AgentDefinition & { permissionMode?: WorkerOptions["permissionMode"]; reuse?: ReuseOption };

/** What `reuse: true` means: a bound on what one process accumulates (caches, memory) over its tasks. */
const DEFAULT_TASKS_PER_PROCESS = 50;

function joinPrompts(...parts: (string | undefined)[]): string | undefined {
  const present = parts.filter((p): p is string => p !== undefined && p.trim() !== "");
  return present.length > 0 ? present.join("\n\n") : undefined;
}

function mergeHooks(...configs: (HookConfig | undefined)[]): HookConfig | undefined {
  const merged: HookConfig = {};
  for (const config of configs) {
    for (const [event, matchers] of Object.entries(config ?? {})) merged[event] = [...(merged[event] ?? []), ...matchers];
  }
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** What an agent definition means for the worker that runs as that agent. */
export function agentWorkerOptions(agent: AgentSpec | undefined): Partial<WorkerOptions> {
  if (!agent) return {};
  return {
    appendSystemPrompt: agent.prompt,
    ...(agent.tools && { tools: agent.tools }),
    ...(agent.disallowedTools && { disallowedTools: agent.disallowedTools }),
    ...(agent.model && { model: agent.model }),
    ...(agent.permissionMode && { permissionMode: agent.permissionMode }),
  };
}

/** Tasks one process serves at most: 1 without reuse. */
export function tasksPerProcess(agent: AgentSpec | undefined, defaults: ReuseOption | undefined): number {
  const reuse = agent?.reuse ?? defaults ?? false;
  if (reuse === false) return 1;
  return reuse === true ? DEFAULT_TASKS_PER_PROCESS : Math.max(1, Math.floor(reuse));
}

/**
 * Layers worker options, later layers winning, except where layering is the
 * point: system-prompt additions and allowed tools accumulate, environments
 * and hooks merge.
 */
export function composeWorkerOptions(...layers: (Partial<WorkerOptions> | undefined)[]): WorkerOptions {
  const result: WorkerOptions = {};
  for (const layer of layers) {
    if (!layer) continue;
    const { appendSystemPrompt, allowedTools, env, hooks, sdkMcpServers, ...rest } = layer;
    Object.assign(result, Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)));
    result.appendSystemPrompt = joinPrompts(result.appendSystemPrompt, appendSystemPrompt);
    if (allowedTools) result.allowedTools = [...new Set([...(result.allowedTools ?? []), ...allowedTools])];
    if (env) result.env = { ...result.env, ...env };
    result.hooks = mergeHooks(result.hooks, hooks);
    if (sdkMcpServers) result.sdkMcpServers = { ...result.sdkMcpServers, ...sdkMcpServers };
  }
  return result;
}
