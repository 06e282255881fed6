// A fresh `npm install` of a clone prints no warning on the oldest Node cadre supports: every locked package
// admits that Node (no EBADENGINE; npm's own dry run agrees on this one), and every install script is decided in
// allowScripts (allowed, or denied with false).
import { copyFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { execa } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import { REPO } from "../support/installed-package.ts";

// npm's own range reading (semver, which npm uses), from the lock's tree.
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string };
};

interface LockEntry {
  version?: string;
  engines?: { node?: string };
  hasInstallScript?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
}

const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as {
  engines: { node: string };
  allowScripts: Record<string, boolean>;
};
const lock = JSON.parse(await readFile(join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
const oldestNode = semver.minVersion(manifest.engines.node).version;
/** A package's name from its place in the lock (the last node_modules/ segment). */
const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

describe("a fresh npm install", () => {
  it(`installs nothing that refuses Node ${oldestNode}, the oldest package.json's engines allows (npm's EBADENGINE)`, () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && entry.engines?.node !== undefined)
      // Another platform's optional build is not installed here, and npm does not check it.
      .filter(([, entry]) => !(entry.optional && (entry.os || entry.cpu)))
      .filter(([, entry]) => !semver.satisfies(oldestNode, entry.engines!.node!))
      .map(([path, entry]) => `${path}@${entry.version} wants node ${entry.engines!.node}`);
    expect(refusing, "override the package to a version that supports it (package.json overrides), or change its parent").toEqual([]);
  });

  it(`is resolved by npm itself without a warning on this Node (${process.version}): npm ci --dry-run of the lock`, async () => {
    // A copy of the manifest and the lock alone: the dry run reads no cache and asks no registry.
    const dir = await mkdtemp(join(tmpdir(), "cadre-quiet-install-"));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await Promise.all(["package.json", "package-lock.json"].map((file) => copyFile(join(REPO, file), join(dir, file))));
    // --loglevel=warn: an npm_config_loglevel inherited from `npm test --silent` would hide what this looks for.
    const flags = ["--dry-run", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=warn"];
    const run = await execa("npm", ["ci", ...flags], { cwd: dir, all: true, reject: false });
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all.split("\n").filter((line) => /^npm (warn|error)/i.test(line))).toEqual([]);
  });

  it("has every package with an install script decided in allowScripts (npm warns of any it does not cover)", () => {
    const undecided = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && entry.hasInstallScript)
      .map(([path]) => nameOf(path))
      .filter((name) => typeof manifest.allowScripts[name] !== "boolean");
    expect(undecided).toEqual([]);
  });
});
