import { realpath } from "node:fs/promises";
import { test as base } from "vitest";
import { tempHome } from "./rehearsal.ts";

/**
 * vitest's `test` with the fixtures cadre's tests share. A test names the ones it
 * needs in its first parameter, and gets them fresh; vitest ends them after it.
 */
export const test = base.extend<{
  /** A new empty directory, by its real path (commands report that one), removed after the test. */
  tmp: string;
}>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern, and tmp has none.
  tmp: async ({}, use) => use(await realpath(await tempHome("cadre-test-"))),
});

export { test as it };
