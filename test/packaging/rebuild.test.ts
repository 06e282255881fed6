// Building again while cadre runs: the tests (and a user with cadre running in another terminal) start
// bin/cadre.js, which loads its commands' chunks from dist/cli lazily, while a build may run beside them.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { repo } from "../support/cli.ts";

const DIST = join(repo, "dist", "cli");
const files = () => readdirSync(DIST, { recursive: true, withFileTypes: true }).flatMap((e) => (e.isFile() ? [join(e.parentPath, e.name)] : []));

describe("rebuilding dist/", () => {
  it("never leaves a moment without a chunk the last build wrote, and removes what the new one does not write", async () => {
    const before = files().sort();
    const stale = join(DIST, "chunks", "left-by-an-older-build.js");
    writeFileSync(stale, "export {};\n");
    const build = execa("node", ["scripts/build-cli.mjs"], { cwd: repo, all: true, reject: false });
    const missing = new Set<string>();
    let done = false;
    void build.finally(() => {
      done = true;
    });
    while (!done) {
      for (const file of before) if (!existsSync(file)) missing.add(file);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const result = await build;
    expect(result.exitCode, result.all).toBe(0);
    expect([...missing]).toEqual([]);
    expect(existsSync(stale)).toBe(false);
    expect(files().sort()).toEqual(before);
  });

  it("is skipped by npm's prepare and the tests' setup when no input changed", async () => {
    const built = statSync(join(DIST, "main.js")).mtimeMs;
    const result = await execa("node", ["scripts/build-if-stale.mjs"], { cwd: repo, all: true, reject: false });
    expect(result.exitCode, result.all).toBe(0);
    expect(statSync(join(DIST, "main.js")).mtimeMs).toBe(built);
  });
});
