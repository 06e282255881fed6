// Helpers for the Deno tests (run by `deno test`, not vitest). Only node: APIs,
// so tsc checks these files with the rest of test/ and Deno runs them as they are.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export { descendants, isGone } from "../support/processes.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DENO_JSON = join(ROOT, "deno.json");

/** The deno binary these tests run under (the `deno` devDependency in CI). */
export const DENO = process.execPath;

/** A private HOME with a work and a temp directory inside; `remove` deletes it all. */
export async function tempHome(): Promise<{ home: string; cwd: string; tmp: string; remove: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), "cadre-deno-test-"));
  const cwd = join(home, "work");
  const tmp = join(home, "tmp");
  await Promise.all([mkdir(cwd), mkdir(tmp)]);
  return { home, cwd, tmp, remove: () => rm(home, { recursive: true, force: true, maxRetries: 3 }) };
}

/** Kills whatever is still alive among `pids`, so a failed test leaves nothing behind. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
