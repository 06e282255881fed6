// The orchestrator on real claude processes the rehearsal server scripts, and the results of its runs.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import { Orchestrator, type OrchestratorOptions, type TaskResult, type WorkerContext } from "../../src/orchestrator/index.ts";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import type { WorkerOptions } from "../../src/worker/index.ts";
import { liveClaudeChildren } from "./processes.ts";
import { tempHome } from "./rehearsal.ts";
import { collect } from "./streams.ts";

/** The script a worker plays: a task's own name, or "peer-<agent>" / "supervisor-<agent>". */
export function scriptFor(context: WorkerContext): string {
  return context.kind === "task" || context.kind === "session" ? context.name : `${context.kind}-${context.agent}`;
}

/**
 * An Orchestrator whose workers are real claude processes scripted by the
 * rehearsal server, sharing one temporary HOME. Closed after the test, and no
 * claude child may survive it.
 */
export async function rehearsedOrchestrator(
  server: RehearsalServer,
  options: OrchestratorOptions & {
    perWorker?: (context: WorkerContext) => Partial<WorkerOptions>;
    script?: (context: WorkerContext) => string;
    /** Log the workers in as a subscription (a dummy claude.ai token) instead of with an API key. */
    subscription?: boolean;
  } = {},
): Promise<{ orchestrator: Orchestrator; cwd: string; home: string }> {
  const home = await tempHome();
  const cwd = join(home, "work");
  await mkdir(cwd, { recursive: true });
  const { perWorker, script = scriptFor, subscription, ...rest } = options;
  const orchestrator = new Orchestrator({
    ...rest,
    defaults: { cwd, ...rest.defaults },
    workerOptions: (context) => ({
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(script(context)), home, subscription }),
      ...perWorker?.(context),
    }),
  });
  onTestFinished(async () => {
    await orchestrator.close();
    const left = await liveClaudeChildren();
    if (left.length > 0) throw new Error(`claude processes survived the test: ${left.join(", ")}`);
  });
  return { orchestrator, cwd, home };
}

/** The results a run gives, by task name (a name given twice keeps its last). */
export async function resultsByName(results: AsyncIterable<TaskResult>): Promise<Map<string, TaskResult>> {
  return new Map((await collect(results)).map((result) => [result.name, result]));
}
