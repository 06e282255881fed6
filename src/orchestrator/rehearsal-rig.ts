import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { offlineClaudeEnv, startRehearsalServer, type RehearsalScripts, type RehearsalServer } from "../rehearsal/index.ts";
import type { OrchestratorOptions, WorkerContext } from "./types.ts";

/**
 * The script a worker plays under rehearsal: the sessions that answer
 * ask_peer and decide supervised hooks play "peer:<agent>" and
 * "supervisor:<agent>"; a task or session plays the script named like it,
 * else the one named like its agent.
 */
export function rehearsalScriptFor(context: WorkerContext, scripts: RehearsalScripts): string {
  if ((context.kind === "peer" || context.kind === "supervisor") && context.agent !== undefined) return `${context.kind}:${context.agent}`;
  if (scripts[context.name] === undefined && context.agent !== undefined && scripts[context.agent] !== undefined) return context.agent;
  return context.name;
}

/** The scripted model and a private HOME for the workers of one run; close() removes both. */
export interface RehearsalRig {
  server: RehearsalServer;
  /** For OrchestratorOptions.workerOptions: the offline environment, the same for every worker. */
  workerOptions: NonNullable<OrchestratorOptions["workerOptions"]>;
  /**
   * For OrchestratorOptions.processOptions: each process talks to its own
   * route, bound to the script of whoever it works for now, so that a spare
   * or a reused process plays the script of its next task.
   */
  processOptions: NonNullable<OrchestratorOptions["processOptions"]>;
  close(): Promise<void>;
}

export async function startRehearsalRig(scripts: RehearsalScripts): Promise<RehearsalRig> {
  const server = await startRehearsalServer({ scripts });
  const home = await mkdtemp(join(tmpdir(), "cadre-rehearse-"));
  let processes = 0;
  return {
    server,
    // Not inherited: the user's CLAUDE_CONFIG_DIR, credentials or endpoint must not leak into a rehearsal.
    workerOptions: () => ({ inheritEnv: false, env: offlineClaudeEnv({ baseUrl: server.url, home }) }),
    processOptions: () => {
      const token = String(++processes);
      return {
        options: { env: { ANTHROPIC_BASE_URL: server.baseUrlForProcess(token) } },
        bind: (context) => server.bind(token, rehearsalScriptFor(context, scripts)),
        release: () => server.unbind(token),
      };
    },
    async close() {
      await server.close();
      await rm(home, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
