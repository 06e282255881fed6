import { HookEventSchema, type AgentDefinition } from "../protocol/index.ts";
import type { HookConfig } from "../worker/hooks.ts";
import type { WorkerOptions } from "../worker/index.ts";

/** An agent as the orchestrator takes it: its prompt, tools, model and permission mode configure the worker. */
export type AgentSpec = AgentDefinition;

function joinPrompts(...parts: (string | undefined)[]): string | undefined {
  const present = parts.filter((p): p is string => p !== undefined && p.trim() !== "");
  return present.length > 0 ? present.join("\n\n") : undefined;
}

function mergeHooks(...configs: (HookConfig | undefined)[]): HookConfig | undefined {
  const merged: HookConfig = {};
  for (const event of HookEventSchema.options) {
    const matchers = configs.flatMap((config) => config?.[event] ?? []);
    if (matchers.length > 0) merged[event] = matchers;
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
