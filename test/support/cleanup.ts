import { afterAll, afterEach, beforeEach } from "vitest";

/**
 * Resources a test helper creates are ended for the test: those made during
 * a test (or its beforeEach) after that test, those made in beforeAll after
 * the file. Importing this module registers the hooks for the importing file;
 * they run after the file's own after-hooks (vitest runs them in reverse).
 */

type Cleanup = () => Promise<void> | void;

const perTest: Cleanup[] = [];
const perFile: Cleanup[] = [];
let inTest = false;

beforeEach(() => {
  inTest = true;
});

/** Runs every cleanup, newest first, even when some fail; then throws the first failure. */
async function runAll(cleanups: Cleanup[]): Promise<void> {
  const errors: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
}

afterEach(async () => {
  inTest = false;
  await runAll(perTest);
});

afterAll(async () => {
  await runAll(perFile);
});

export function registerCleanup(cleanup: Cleanup): void {
  (inTest ? perTest : perFile).push(cleanup);
}
