import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { offlineClaudeEnv, startRehearsalServer, type RehearsalScripts, type RehearsalServer } from "../rehearsal/index.ts";
import { removeOnExit } from "../worker/index.ts";
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
  /** For OrchestratorOptions.workerOptions: points each worker at its script. */
  workerOptions: NonNullable<OrchestratorOptions["workerOptions"]>;
  close(): Promise<void>;
}

export async function startRehearsalRig(scripts: RehearsalScripts): Promise<RehearsalRig> {
  const server = await startRehearsalServer({ scripts });
  const home = await mkdtemp(join(tmpdir(), "cadre-rehearse-"));
  // Also when cadre is killed or exits at once (a second Ctrl-C), without reaching close().
  const removed = removeOnExit(home);
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
      removed();
    },
  };
}
