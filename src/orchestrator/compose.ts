// The precedence of worker settings: defaults, then agent, then task, and how many tasks one process serves.
import { HookEventSchema } from "../protocol/index.ts";
import type { HookConfig, WorkerOptions } from "../worker/index.ts";
import type { SessionSpec } from "./session.ts";
import type { AgentSpec, ReuseOption, TaskSpec } from "./types.ts";

/** What `reuse: true` means: a bound on what one process accumulates (caches, memory) over its tasks. */
const DEFAULT_TASKS_PER_PROCESS = 50;

/** Tasks one process serves at most: 1 without reuse. The agent's setting wins over the orchestrator's. */
export function tasksPerProcess(agent: AgentSpec | undefined, defaults: ReuseOption | undefined): number {
  const reuse = agent?.reuse ?? defaults ?? false;
  if (reuse === false) return 1;
  return reuse === true ? DEFAULT_TASKS_PER_PROCESS : Math.max(1, Math.floor(reuse));
}

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
  const definition: Partial<WorkerOptions> = {
    appendSystemPrompt: agent.prompt,
    ...(agent.tools && { tools: agent.tools }),
    ...(agent.disallowedTools && { disallowedTools: agent.disallowedTools }),
    ...(agent.model && { model: agent.model }),
    ...(agent.permissionMode && { permissionMode: agent.permissionMode }),
    ...(agent.maxTurns && { maxTurns: agent.maxTurns }),
  };
  return agent.worker ? composeWorkerOptions(definition, agent.worker) : definition;
}

/** Lists that every layer adds to: what one layer allows, denies or reaches, a higher one cannot silently drop. */
const ACCUMULATED = ["allowedTools", "disallowedTools", "additionalDirectories"] as const;
/** Maps merged by name, a higher layer's entry replacing a lower one's of the same name. */
const MERGED = ["env", "sdkMcpServers", "mcpServers", "agents"] as const;

/**
 * Layers worker options, later layers winning, except where layering is the
 * point: system-prompt additions, allowed and denied tools and extra
 * directories accumulate; environments, hooks, MCP servers and subagents merge.
 */
function composeWorkerOptions(...layers: (Partial<WorkerOptions> | undefined)[]): WorkerOptions {
  const result: WorkerOptions = {};
  const special = new Set<string>(["appendSystemPrompt", "hooks", ...ACCUMULATED, ...MERGED]);
  for (const layer of layers) {
    if (!layer) continue;
    Object.assign(result, Object.fromEntries(Object.entries(layer).filter(([key, v]) => v !== undefined && !special.has(key))));
    result.appendSystemPrompt = joinPrompts(result.appendSystemPrompt, layer.appendSystemPrompt);
    result.hooks = mergeHooks(result.hooks, layer.hooks);
    for (const key of ACCUMULATED) {
      const values = layer[key];
      if (values) result[key] = [...new Set([...(result[key] ?? []), ...values])];
    }
    for (const key of MERGED) {
      const entries = layer[key];
      if (entries) (result as Record<string, unknown>)[key] = { ...result[key], ...entries };
    }
  }
  return result;
}

/**
 * The options a worker starts with: the one place where precedence is
 * decided, for every kind of worker. A setting of a higher layer wins over a
 * lower one's; system-prompt additions (an agent's prompt among them) join in
 * layer order, allowed and denied tools and extra directories accumulate,
 * env, hooks, MCP servers (in-process and external) and subagents merge.
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
