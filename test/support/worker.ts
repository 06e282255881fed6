import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { expect, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { type InvalidControlAnswerError, Worker, type WorkerOptions } from "../../src/worker/index.ts";
import { isAlive } from "./processes.ts";
import { tempHome } from "./rehearsal.ts";

export { isAlive };

export interface RehearsedWorker {
  worker: Worker;
  home: string;
  /** The worker's working directory (inside its HOME). */
  cwd: string;
}

/**
 * Starts a Worker on the real claude CLI, scripted by `script` on the rehearsal
 * server, with its own HOME and cwd. After the test it is closed and must be gone.
 */
export async function startRehearsedWorker(server: RehearsalServer, script: string, options: WorkerOptions = {}): Promise<RehearsedWorker> {
  const home = await tempHome();
  const cwd = join(home, "work");
  await mkdir(cwd, { recursive: true });
  const worker = await Worker.start({
    cwd,
    inheritEnv: false,
    ...options,
    env: { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor(script), home }), ...options.env },
  });
  onTestFinished(async () => {
    await worker.close();
    expect(isAlive(worker.pid), `claude pid ${worker.pid} survived the test`).toBe(false);
  });
  return { worker, home, cwd };
}

/** The errors of the worker's invalid_answer events, collected from now on. */
export function invalidAnswers(worker: Worker): InvalidControlAnswerError[] {
  const errors: InvalidControlAnswerError[] = [];
  worker.on((event) => {
    if (event.type === "invalid_answer") errors.push(event.error);
  });
  return errors;
}
