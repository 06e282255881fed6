// The fast tier's guard (vitest setup file): a test that starts a process fails, so the tier stays
// process-free (no claude, no redis, no chromium, no child node) and takes seconds, not minutes.
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { afterEach, expect } from "vitest";

const STARTERS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;

/** What the tests tried to start since the last check; on globalThis, as this file runs again before each test file. */
const shared = globalThis as { cadreProcessAttempts?: string[] };
shared.cadreProcessAttempts ??= [];
export const attempts: string[] = shared.cadreProcessAttempts;

for (const name of STARTERS) {
  (childProcess as unknown as Record<string, unknown>)[name] = (command: unknown) => {
    attempts.push(`${name}(${String(command)})`);
    throw new Error(`the fast tier starts no process, but a test called child_process.${name}(${String(command)}): move the file to the e2e tier`);
  };
}
// ESM imports of node:child_process (execa's among them) see the replaced functions too.
syncBuiltinESMExports();

afterEach(() => {
  expect(attempts.splice(0), "processes the test tried to start").toEqual([]);
});
