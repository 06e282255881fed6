// Starts the worker of a task or session: its settings layered, its routing bound, its telemetry resource set.
import process from "node:process";
import { own } from "../util/own.ts";
import { stableKey } from "../util/stable-key.ts";
import { type PermissionHandler, policyDecision, Worker, type WorkerOptions } from "../worker/index.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import { layerWorkerOptions, type WorkerLayers } from "./compose.ts";
import { SessionNotResumableError } from "./errors.ts";
import type { PeerNetwork } from "./peer-network.ts";
import { PEER_SERVER_NAME, PEER_TOOL_IDS } from "./peers/peer-server.ts";
import { TASK_TOOL_NAMES } from "./peers/task-tools.ts";
import { routedHookConfig } from "./routed-hooks.ts";
import type { OrchestratorEvent, OrchestratorOptions, TaskInfo, WorkerContext } from "./types.ts";
import { type Binding, BoundWorker } from "./worker-binding.ts";

export interface WorkerFactoryDeps<R extends { info: TaskInfo }> {
  options: OrchestratorOptions;
  sessions: AgentSessions;
  peers: PeerNetwork<R>;
  emit(event: OrchestratorEvent): void;
  /** Aborts every start when the orchestrator closes. */
  closing: AbortSignal;
  /** Every process started is handed here, to be ended with the orchestrator. */
  track(worker: Worker): void;
}

/** How to start a worker for some work, and which idle processes could do that work instead. */
export interface WorkerPlan<R extends { info: TaskInfo }> {
  /**
   * Equal for work whose workers would be started with identical settings
   * (after precedence): an idle process of the same key serves it as well as a new one.
   */
  readonly key: string;
  /**
   * The settings the work asks for (defaults < agent < its own < workerOptions), without the
   * routing bound late and what a process brings: what decides the prompt prefix it sends.
   */
  readonly settings: WorkerOptions;
  /** A new process bound to this work; `extra` is merged last (a session's `resume`). */
  start(signal: AbortSignal | undefined, extra?: Partial<WorkerOptions>): Promise<BoundWorker<R>>;
  /** Hands an idle process of the same key to this work. */
  adopt(bound: BoundWorker<R>): void;
}

export interface WorkItem<R> {
  context: WorkerContext;
  /** The task's or session's own settings (over its agent's and the defaults). */
  overrides: Partial<WorkerOptions> | undefined;
  record?: R;
  /** A session's permission handler. */
  canUseTool?: PermissionHandler;
  chain?: () => readonly string[];
  /** The worker may post tasks to the run (post_task, list_tasks, wait_tasks), when the orchestrator has a taskBoard. */
  postTasks?: boolean;
}

/** The post tools as the model sees them, for a worker's allowedTools. */
const TASK_TOOL_IDS = TASK_TOOL_NAMES.map((name) => `mcp__${PEER_SERVER_NAME}__${name}`);

/** Which tools of cadre's server a worker gets. */
type CadreTools = { peerTools: boolean; postTasks: boolean };

const OFF = /^(|0|false|no|off)$/i;

/**
 * Where the user turned on Claude Code's own telemetry (CLAUDE_CODE_ENABLE_TELEMETRY; cadre
 * never does), the worker's OTEL_RESOURCE_ATTRIBUTES, with the run, task and agent it starts
 * for added, so the CLI's metrics and events can be told apart by them; else undefined.
 * A spare or reused process keeps the names it started with.
 */
export function telemetryResource(options: WorkerOptions, context: WorkerContext, runId: string | undefined): string | undefined {
  const env = { ...(options.inheritEnv === false ? {} : process.env), ...options.env };
  if (OFF.test(env.CLAUDE_CODE_ENABLE_TELEMETRY ?? "")) return undefined;
  const named: [string, string | undefined][] = [
    ["cadre.run_id", runId],
    ["cadre.task", context.name],
    ["cadre.agent", context.agent],
    ["cadre.worker_kind", context.kind],
  ];
  const ours = named.filter((pair): pair is [string, string] => pair[1] !== undefined).map(([key, value]) => `${key}=${encodeURIComponent(value)}`);
  return [env.OTEL_RESOURCE_ATTRIBUTES, ...ours].filter(Boolean).join(",");
}

/**
 * Builds the workers of an orchestrator: the one place where the layers of
 * settings meet (defaults < agent < the task's or session's own < routing <
 * workerOptions < processOptions) and where every process starts, so that
 * spares and reused processes are started, tracked and ended like the rest.
 */
export class WorkerFactory<R extends { info: TaskInfo }> {
  readonly #deps: WorkerFactoryDeps<R>;

  constructor(deps: WorkerFactoryDeps<R>) {
    this.#deps = deps;
  }

  plan(work: WorkItem<R>): WorkerPlan<R> {
    const { options } = this.#deps;
    const { context } = work;
    const agent = context.agent ? own(options.agents, context.agent) : undefined;
    const layers = { defaults: options.defaults, agent, task: work.overrides };
    const settled = layerWorkerOptions(layers);
    const perWorker = options.workerOptions?.(context) ?? {};
    // The peer server costs a worker an MCP handshake at its start and five tools in every request: by default,
    // only a worker with another agent to reach gets it (Orchestrator.peerTools says otherwise).
    const peerTools = options.peerTools ?? this.#deps.peers.reachesAnyone(context.agent ?? context.name);
    // Routing (hooks, permissions, peer tools) is bound late, so it is the same for every work of these settings.
    const postTasks = work.postTasks === true && options.taskBoard !== undefined;
    const key = stableKey({ agent: context.agent, settled, perWorker, peerTools, ...(postTasks && { postTasks }) });
    return {
      key,
      settings: layerWorkerOptions({ ...layers, call: () => [perWorker] }),
      start: (signal, extra) => this.#start(key, work, { ...layers, settled, perWorker, tools: { peerTools, postTasks } }, signal, extra),
      adopt: (bound) => bound.bindTo(context, work.record, work.canUseTool),
    };
  }

  async #start(
    key: string,
    work: WorkItem<R>,
    {
      settled,
      perWorker,
      tools,
      ...layers
    }: Omit<WorkerLayers, "call"> & { settled: WorkerOptions; perWorker: Partial<WorkerOptions>; tools: CadreTools },
    signal: AbortSignal | undefined,
    extra: Partial<WorkerOptions> | undefined,
  ): Promise<BoundWorker<R>> {
    const { closing } = this.#deps;
    const binding: Binding<R> = {
      context: work.context,
      record: work.record,
      canUseTool: work.canUseTool,
      chain: work.chain ?? (() => []),
      grantedPermissions: false,
    };
    const process = this.#deps.options.processOptions?.();
    const { canUseTool: ownHandler, ...perWorkerRest } = perWorker;
    const options = layerWorkerOptions({
      ...layers,
      call: (below) => [this.#routing(binding, below, tools), perWorkerRest, process?.options, extra],
    });
    options.canUseTool = this.#permissions(binding, ownHandler, settled.canUseTool, options);
    const resource = telemetryResource(options, work.context, this.#deps.options.runId);
    if (resource) options.env = { ...options.env, OTEL_RESOURCE_ATTRIBUTES: resource };
    // Without a session file there is nothing to resume from.
    if (options.resume !== undefined && options.persistSession === false) throw new SessionNotResumableError(work.context.name);
    process?.bind(work.context);
    let worker: Worker;
    try {
      worker = await Worker.start(options, signal ? AbortSignal.any([signal, closing]) : closing);
    } catch (error) {
      process?.release?.();
      throw error;
    }
    if (process?.release) void worker.exited.then(() => process.release?.());
    this.#deps.track(worker);
    // A spare has served nobody yet; work started for itself counts as served.
    return new BoundWorker(worker, key, binding, process, Object.keys(options.mcpServers ?? {}), work.record ? 1 : 0);
  }

  /** Hooks and peer tools, reading the binding when they are used. */
  #routing(binding: Binding<R>, settled: WorkerOptions, { peerTools, postTasks }: CadreTools): Partial<WorkerOptions> {
    const { options, sessions, peers, emit } = this.#deps;
    const caller = () => binding.context.agent ?? binding.context.name;
    const routing: Partial<WorkerOptions> = {
      hooks: routedHookConfig(options.hooks, {
        cwd: settled.cwd,
        ask: async (supervisor, prompt, signal) =>
          (await sessions.ask("supervisor", supervisor, prompt, [caller()], signal, binding.record?.info.name)).text,
        onFailure: (event, error) => binding.record && emit({ type: "hook_failed", task: binding.record.info, event, error }),
        onDecision: (decision) => binding.record && emit({ type: "hook_decided", task: binding.record.info, ...decision }),
      }),
    };
    const board = postTasks ? options.taskBoard : undefined;
    if (peerTools || board) {
      routing.sdkMcpServers = {
        cadre: peers.serverFor(
          caller,
          () => binding.record,
          () => binding.chain(),
          { peers: peerTools, ...(board && { board }) },
        ),
      };
      routing.allowedTools = [...(peerTools ? PEER_TOOL_IDS : []), ...(board ? TASK_TOOL_IDS : [])];
    }
    return routing;
  }

  /**
   * Who answers a permission request: the worker's own handler (workerOptions,
   * then the session's, then the settings'), else the orchestrator's routed
   * one for the task, else the policy. Notes grants that outlive the task.
   */
  #permissions(
    binding: Binding<R>,
    perWorkerHandler: PermissionHandler | undefined,
    settledHandler: PermissionHandler | undefined,
    options: WorkerOptions,
  ): PermissionHandler {
    const routed = this.#deps.options.canUseTool;
    return async (request) => {
      const own = perWorkerHandler ?? binding.canUseTool ?? settledHandler;
      const decision = own
        ? await own(request)
        : routed && binding.record
          ? await routed(request, binding.record.info)
          : policyDecision(options.permissionPolicy ?? "deny", request.toolName);
      if (decision.behavior === "allow" && (decision.updatedPermissions?.length ?? 0) > 0) binding.grantedPermissions = true;
      return decision;
    };
  }
}
