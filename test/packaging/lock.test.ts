// package-lock.json must satisfy `npm ci` on every platform: each optional dependency a
// locked package declares has its own entry. `npm install` against a registry that lacks
// other platforms' builds drops those entries silently, and `npm ci` then refuses the lock.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../support/installed-package.ts";

interface LockEntry {
  optionalDependencies?: Record<string, string>;
}

/** Where npm would look for `name` needed by the package at `path`: its own node_modules, then each parent's. */
function resolves(packages: Record<string, LockEntry>, path: string, name: string): boolean {
  let at = path;
  for (;;) {
    if (packages[`${at ? `${at}/` : ""}node_modules/${name}`]) return true;
    if (at === "") return false;
    const cut = at.lastIndexOf("/node_modules/");
    at = cut === -1 ? "" : at.slice(0, cut);
  }
}

describe("package-lock.json", () => {
  it("lists every optional dependency of every locked package, for every platform", async () => {
    const lock = JSON.parse(await readFile(join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
    const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => !resolves(lock.packages, path, name))
        .map((name) => `${path || "(root)"} → ${name}`),
    );
    expect(missing, "run npm install against the public registry, or add the entries: npm ci refuses this lock").toEqual([]);
  });
});
