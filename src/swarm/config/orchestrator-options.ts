// The edge between the swarm config (snake_case) and the orchestrator (camelCase): where one becomes the other.
import type { AgentSpec, OrchestratorOptions, RoutedHook, TaskSpec } from "../../orchestrator/index.ts";
import type { AgentDefinition as CliAgentDefinition } from "../../protocol/index.ts";
import type { ExternalMcpServer, WorkerOptions } from "../../worker/index.ts";
import type { SwarmAgentDefinition } from "../agents/definition.ts";
import { CONTROL_SETTINGS, type Controls, elicitationAnswer, thinkingConfig } from "./controls.ts";
import type { ResolvedSwarmConfig, ResolvedTask } from "./resolve.ts";
import type { SwarmAgent } from "./resolve-agents.ts";
import type { McpServerEntry, Permissions } from "./settings.ts";
import { usesResults } from "./template.ts";

/**
 * The edge between the swarm config (snake_case, as people write it) and the
 * orchestrator (camelCase): the one place one becomes the other. Worker
 * settings pass through as written, each at its own layer (defaults, agent,
 * task); the orchestrator decides what wins (layerWorkerOptions).
 */

/** The worker settings a swarm file gives as they are, as it spells them → as the orchestrator does. */
const WORKER_SETTINGS = {
  model: "model",
  permission_mode: "permissionMode",
  max_turns: "maxTurns",
  tools: "tools",
  disallowed_tools: "disallowedTools",
  allowed_tools: "allowedTools",
  append_system_prompt: "appendSystemPrompt",
  cwd: "cwd",
  add_dirs: "additionalDirectories",
  output_schema: "jsonSchema",
  fallback_model: "fallbackModel",
  betas: "betas",
  plugin_dirs: "pluginDirs",
  ...CONTROL_SETTINGS,
} as const satisfies Record<string, keyof WorkerOptions>;

type WrittenSettings = { [K in keyof typeof WORKER_SETTINGS]?: WorkerOptions[(typeof WORKER_SETTINGS)[K]] } & Pick<
  Controls,
  "thinking" | "elicitation"
> & {
    mcp_servers?: Record<string, McpServerEntry>;
    permissions?: Permissions;
    env?: Record<string, string | number | boolean>;
    subagents?: Record<string, SwarmAgentDefinition>;
  };

/** An `.mcp.json` entry as the CLI's --mcp-config takes it. */
function mcpServer(entry: McpServerEntry): ExternalMcpServer {
  if (entry.type === "http" || entry.type === "sse") {
    return { type: entry.type, url: entry.url ?? "", ...(entry.headers !== undefined && { headers: entry.headers }) };
  }
  return {
    type: "stdio",
    command: entry.command ?? "",
    ...(entry.args !== undefined && { args: entry.args }),
    ...(entry.env !== undefined && { env: entry.env }),
  };
}

/** A subagent as `initialize` carries it. */
function cliAgent(definition: SwarmAgentDefinition): CliAgentDefinition {
  return {
    description: definition.description,
    prompt: definition.prompt,
    ...(definition.tools !== undefined && { tools: definition.tools }),
    ...(definition.disallowed_tools !== undefined && { disallowedTools: definition.disallowed_tools }),
    ...(definition.model !== undefined && { model: definition.model }),
    ...(definition.permission_mode !== undefined && { permissionMode: definition.permission_mode }),
    ...(definition.max_turns !== undefined && { maxTurns: definition.max_turns }),
    ...(definition.effort !== undefined && { effort: definition.effort }),
    ...(Array.isArray(definition.skills) && { skills: definition.skills }),
    ...((definition.mcp_servers !== undefined || definition.mcp_server_names !== undefined) && {
      mcpServers: [...(definition.mcp_server_names ?? []), ...(definition.mcp_servers ? [mapValues(definition.mcp_servers, mcpServer)] : [])],
    }),
  };
}

const mapValues = <T, U>(record: Record<string, T>, map: (value: T) => U): Record<string, U> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));

/** The worker settings among `written` (defaults, an agent or a task), renamed; the other keys stay behind. */
function workerSettings(written: WrittenSettings): Partial<WorkerOptions> {
  const settings: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(WORKER_SETTINGS)) {
    const value = written[key as keyof typeof WORKER_SETTINGS];
    if (value !== undefined) settings[name] = value;
  }
  const options = settings as Partial<WorkerOptions>;
  // Permission rules are what --allowedTools and --disallowedTools take; both add up across layers.
  const { allow, deny } = written.permissions ?? {};
  if (allow !== undefined) options.allowedTools = [...(options.allowedTools ?? []), ...allow];
  if (deny !== undefined) options.disallowedTools = [...(options.disallowedTools ?? []), ...deny];
  if (written.mcp_servers !== undefined) options.mcpServers = mapValues(written.mcp_servers, mcpServer);
  if (written.env !== undefined) options.env = mapValues(written.env, String);
  if (written.subagents !== undefined) options.agents = mapValues(written.subagents, cliAgent);
  if (written.thinking !== undefined) options.thinking = thinkingConfig(written.thinking);
  if (written.elicitation !== undefined) options.elicitationPolicy = elicitationAnswer(written.elicitation);
  return options;
}

/** An agent as the orchestrator runs it: what the CLI knows of it, and in `worker` the rest of its settings. */
function agentSpec(agent: SwarmAgent): AgentSpec {
  const {
    model: _model,
    permission_mode: _mode,
    max_turns: _turns,
    tools: _tools,
    disallowed_tools: _disallowed,
    mcp_server_names: _names,
    reuse,
    budget_usd,
    ...settings
  } = agent;
  const worker = workerSettings(settings);
  return {
    ...cliAgent(agent),
    ...(Object.keys(worker).length > 0 && { worker }),
    ...(reuse !== undefined && { reuse }),
    ...(budget_usd !== undefined && { budgetUsd: budget_usd }),
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
  const limits = Object.entries(config.agents).flatMap(([name, agent]) =>
    agent.max_concurrency === undefined ? [] : [[name, agent.max_concurrency]],
  );
  return {
    ...(config.concurrency !== undefined && { concurrency: config.concurrency }),
    ...(limits.length > 0 && { agentLimits: Object.fromEntries(limits) }),
    ...(config.budget_usd !== undefined && { budgetUsd: config.budget_usd }),
    ...(config.budget_forecast !== undefined && { budgetForecast: config.budget_forecast }),
    ...(config.plan_usage !== undefined && { planUsage: { pauseAt: config.plan_usage.pause_at } }),
    ...(config.cache_stagger !== undefined && { cacheStagger: config.cache_stagger }),
    ...(config.peer_tools !== undefined && { peerTools: config.peer_tools }),
    ...(config.defaults.retries !== undefined && { retries: config.defaults.retries }),
    ...(config.defaults.reuse !== undefined && { reuse: config.defaults.reuse }),
    agents: mapValues(config.agents, agentSpec),
    defaults: { ...workerSettings(config.defaults), ...(config.session_persistence === false && { persistSession: false }) },
    hooks: hooksOf(config),
    // No connections means every agent may reach every other.
    connections: Object.keys(config.connections).length > 0 ? config.connections : undefined,
  };
}

/**
 * Whether a task's prompt is text only: one that took in anything computed (a
 * dependency's result, the round before's, an item of a result) is, always;
 * a prompt written by hand in the file keeps Claude Code's meaning (`/review`
 * runs the command) unless verbatim_prompts says otherwise.
 */
function verbatimPrompt(task: ResolvedTask): true | undefined {
  return task.prompt_computed === true || task.posted !== undefined || usesResults(task.prompt) ? true : undefined;
}

/** One config task as the orchestrator runs it; `prompt` has its {{results.x}} filled in. */
export function taskSpecFor(task: ResolvedTask, prompt: string, signal: AbortSignal): TaskSpec {
  const worker = workerSettings(task.settings);
  const verbatim = verbatimPrompt(task);
  return {
    name: task.name,
    prompt,
    ...(verbatim && { verbatim }),
    ...(task.agent !== undefined && { agent: task.agent }),
    ...(task.model !== undefined && { model: task.model }),
    ...(task.cwd !== undefined && { cwd: task.cwd }),
    ...(task.timeout_s !== undefined && { timeoutMs: task.timeout_s * 1000 }),
    ...(task.retries !== undefined && { retries: task.retries }),
    priority: task.priority,
    ...(task.budget_usd !== undefined && { budgetUsd: task.budget_usd, budgetName: task.round_of?.task ?? task.name }),
    ...(Object.keys(worker).length > 0 && { worker }),
    ...(task.post_tasks && { postTasks: true }),
    ...(task.posted?.budget_agent !== undefined && { budgetAgent: task.posted.budget_agent }),
    signal,
  };
}
