import { type AgentDefinition, HookEventSchema } from "../protocol/index.ts";
import type { HookConfig } from "../worker/hooks.ts";
import type { WorkerOptions } from "../worker/index.ts";
import type { SessionSpec } from "./session.ts";
import type { TaskSpec } from "./types.ts";

/** An agent as the orchestrator runs it: what the CLI knows of an agent, and the worker settings it brings. */
export type AgentSpec = AgentDefinition;

/**
 * The settings of one worker, lowest precedence first: defaults < agent <
 * task < call. Every kind of worker is built from them: a task's attempt and
 * a session have all four; a peer or supervisor session has no task layer.
 */
export interface WorkerLayers {
  /** The orchestrator's defaults, for every worker. */
  defaults?: Partial<WorkerOptions>;
  /** The agent the worker runs as. */
  agent?: AgentSpec;
  /** What the task or session asks for itself. */
  task?: Partial<WorkerOptions>;
  /**
   * What this start adds (the session's permission handler, routed hooks and
   * peer tools, the per-worker hook), given what the layers below came to.
   */
  call?: (settled: WorkerOptions) => (Partial<WorkerOptions> | undefined)[];
}

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
function agentWorkerOptions(agent: AgentSpec | undefined): Partial<WorkerOptions> {
  if (!agent) return {};
  return {
    appendSystemPrompt: agent.prompt,
    ...(agent.tools && { tools: agent.tools }),
    ...(agent.disallowedTools && { disallowedTools: agent.disallowedTools }),
    ...(agent.model && { model: agent.model }),
    ...(agent.permissionMode && { permissionMode: agent.permissionMode }),
    ...(agent.maxTurns && { maxTurns: agent.maxTurns }),
  };
}

/**
 * Layers worker options, later layers winning, except where layering is the
 * point: system-prompt additions and allowed tools accumulate, environments
 * and hooks merge.
 */
function composeWorkerOptions(...layers: (Partial<WorkerOptions> | undefined)[]): WorkerOptions {
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

/**
 * The options a worker starts with: the one place where precedence is
 * decided, for every kind of worker. A setting of a higher layer wins over a
 * lower one's; system-prompt additions (an agent's prompt among them) join in
 * layer order, allowed tools accumulate, env, hooks and in-process MCP
 * servers merge.
 */
export function layerWorkerOptions(layers: WorkerLayers): WorkerOptions {
  const settled = composeWorkerOptions(layers.defaults, agentWorkerOptions(layers.agent), layers.task);
  return layers.call ? composeWorkerOptions(settled, ...layers.call(settled)) : settled;
}

/** The worker settings a task asks for itself. */
export function taskWorkerOptions(spec: TaskSpec): Partial<WorkerOptions> {
  return { model: spec.model, cwd: spec.cwd, ...spec.worker };
}

/** The worker settings a session asks for itself. */
export function sessionWorkerOptions(spec: SessionSpec): Partial<WorkerOptions> {
  return {
    model: spec.model,
    cwd: spec.cwd,
    appendSystemPrompt: spec.appendSystemPrompt,
    allowedTools: spec.allowedTools,
    permissionMode: spec.permissionMode,
    ...spec.worker,
  };
}
