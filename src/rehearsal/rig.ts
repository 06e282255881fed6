import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { offlineClaudeEnv } from "./env.ts";
import type { RehearsalScripts } from "./script.ts";
import { type RehearsalServer, startRehearsalServer } from "./server.ts";

/**
 * The worker to point at a script, as the orchestrator describes it (its
 * WorkerContext). Declared here, by shape, so that the rehearsal layer
 * imports nothing from the layers that use it.
 */
export interface ScriptedWorker {
  /** "task", "session", "peer" or "supervisor". */
  kind: string;
  /** The task or session name; the agent name for peers and supervisors. */
  name: string;
  agent: string | undefined;
}

/** The workers that answer for an agent rather than run a task: ask_peer's peer, a hook's supervisor. */
export type AgentSessionKind = "peer" | "supervisor";

const AGENT_SCRIPT = /^(peer|supervisor):(.+)$/;

/** The script an agent's peer or supervisor session plays: "peer:<agent>" or "supervisor:<agent>". */
export function agentScriptName(kind: AgentSessionKind, agent: string): string {
  return `${kind}:${agent}`;
}

/** What a script name such as "peer:critic" is for; undefined for the name of a task or session. */
export function parseAgentScriptName(name: string): { kind: AgentSessionKind; agent: string } | undefined {
  const match = AGENT_SCRIPT.exec(name);
  return match ? { kind: match[1] as AgentSessionKind, agent: match[2]! } : undefined;
}

/**
 * The script a worker plays under rehearsal: the sessions that answer
 * ask_peer and decide supervised hooks play "peer:<agent>" and
 * "supervisor:<agent>"; a task or session plays the script named like it,
 * else the one named like its agent.
 */
export function rehearsalScriptFor(context: ScriptedWorker, scripts: RehearsalScripts): string {
  if ((context.kind === "peer" || context.kind === "supervisor") && context.agent !== undefined) return agentScriptName(context.kind, context.agent);
  if (scripts[context.name] === undefined && context.agent !== undefined && scripts[context.agent] !== undefined) return context.agent;
  return context.name;
}

/** The scripted model and a private HOME for the workers of one run; close() removes both. */
export interface RehearsalRig {
  server: RehearsalServer;
  /** For OrchestratorOptions.workerOptions: points each worker at its script. */
  workerOptions: (context: ScriptedWorker) => { inheritEnv: false; env: Record<string, string> };
  close(): Promise<void>;
}

export async function startRehearsalRig(scripts: RehearsalScripts): Promise<RehearsalRig> {
  const server = await startRehearsalServer({ scripts });
  const home = await mkdtemp(join(tmpdir(), "cadre-rehearse-"));
  return {
    server,
    // Not inherited: the user's CLAUDE_CONFIG_DIR, credentials or endpoint must not leak into a rehearsal.
    workerOptions: (context) => ({
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(rehearsalScriptFor(context, scripts)), home }),
    }),
    async close() {
      await server.close();
      await rm(home, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
