// What one `cadre mcp` serves its clients from: the orchestrator, the session registry and their limits.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { OrchestratorOptions } from "../orchestrator/index.ts";
import { Orchestrator } from "../orchestrator/index.ts";
import type { RehearsalRig, RehearsalScripts } from "../rehearsal/index.ts";
import { createCadreServer } from "./server.ts";
import { SessionRegistry, type SessionRegistryOptions } from "./session-registry.ts";
import { WorkflowRuns } from "./workflow-runs.ts";

export interface McpRuntimeOptions extends SessionRegistryOptions {
  /** The orchestrator's settings (agents, defaults, hooks, budget, …), e.g. from a swarm config. */
  orchestrator?: Omit<OrchestratorOptions, "workerOptions">;
  /** Turns running at once over all sessions; overrides orchestrator.concurrency. */
  concurrency?: number;
  /**
   * Rehearsal: children talk to a scripted model on loopback instead of the
   * API. A session plays the script named like the session, else the one
   * named like its agent.
   */
  rehearsal?: { scripts: RehearsalScripts };
  elicitation?: boolean;
  defaultWaitS?: number;
  /** Spare children started ahead of time with the default settings, for spawn_session to take at once. Default 1; 0: none. */
  warm?: number;
}

const DEFAULT_SPARES = 1;

/**
 * Everything `cadre mcp` runs on: one Orchestrator, the session registry,
 * and with rehearsal the scripted model and the children's private HOME.
 * close() ends every child process.
 */
export class McpRuntime {
  #closing: Promise<void> | undefined;
  /** Settles once the spares are up; rejects when not one could start (the server serves on without them). */
  readonly spares: Promise<void>;

  /** The workflow scripts run_workflow started. */
  readonly workflows: WorkflowRuns;
  readonly #options: McpRuntimeOptions;
  readonly #rehearsal: RehearsalRig | undefined;

  private constructor(
    readonly orchestrator: Orchestrator,
    readonly registry: SessionRegistry,
    options: McpRuntimeOptions,
    rehearsal: RehearsalRig | undefined,
  ) {
    this.#options = options;
    this.#rehearsal = rehearsal;
    this.workflows = new WorkflowRuns(orchestrator);

    const warm = options.warm ?? DEFAULT_SPARES;
    // A spawn_session with no settings of its own matches them: same defaults, and its permissions are bound when it takes one.
    this.spares = warm > 0 ? orchestrator.prewarm({ worker: { ...SessionRegistry.CHILD_WORKER } }, warm) : Promise.resolve();
    this.spares.catch(() => {});
  }

  static async start(options: McpRuntimeOptions = {}): Promise<McpRuntime> {
    // The scripted model's server and script parser load only for a rehearsal.
    const rehearsal = options.rehearsal ? await (await import("../rehearsal/rig.ts")).startRehearsalRig(options.rehearsal.scripts) : undefined;
    const base = options.orchestrator ?? {};
    let registry: SessionRegistry | undefined;
    const orchestrator = new Orchestrator({
      ...base,
      // A child's MCP server that asks its user reaches the parent's user (MCP elicitation), or is declined.
      defaults: { ...base.defaults, onElicitation: (request) => registry?.elicit(request) ?? Promise.resolve({ action: "decline" }) },
      concurrency: options.concurrency ?? base.concurrency,
      workerOptions: rehearsal?.workerOptions,
      processOptions: rehearsal?.processOptions,
    });
    registry = new SessionRegistry(orchestrator, options);
    return new McpRuntime(orchestrator, registry, options, rehearsal);
  }

  /** A server for one client connection. */
  createServer(owner: string): McpServer {
    return createCadreServer(this.registry, owner, {
      agents: Object.keys(this.orchestrator.options.agents ?? {}),
      elicitation: this.#options.elicitation,
      defaultWaitS: this.#options.defaultWaitS,
      workflows: this.workflows,
    });
  }

  /** Ends every child and what rehearsal started. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.workflows.closeAll();
      await this.registry.closeAll();
      await this.orchestrator.close();
      await this.#rehearsal?.close();
    })();
    return this.#closing;
  }
}
