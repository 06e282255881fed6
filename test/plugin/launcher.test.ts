// The plugin's server launcher starts the cadre of the plugin's version: the built cadre of the marketplace it was
// installed from, else npx cadre@<version>; a `cadre` on PATH is never run.
import { chmod, cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { PLUGIN, REPO, readJson } from "../support/plugin.ts";
import { tempHome } from "../support/rehearsal.ts";

/** A copy of the plugin away from the repository (as Claude Code's cache holds it), and a PATH of recording fakes. */
async function cachedPlugin() {
  const home = await tempHome("cadre-plugin-launch-");
  const plugin = join(home, "cache", "cadre", "0.1.0");
  await cp(PLUGIN, plugin, { recursive: true });
  const bin = join(home, "bin");
  const calls = join(home, "calls.txt");
  await mkdir(bin);
  for (const name of ["npx", "cadre"]) {
    await writeFile(join(bin, name), `#!/bin/sh\necho "${name} $*" >> "${calls}"\n`);
    await chmod(join(bin, name), 0o755);
  }
  const launch = (env: Record<string, string> = {}) =>
    execa(process.execPath, [join(plugin, "bin", "cadre.mjs"), "mcp"], {
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home, ...env },
      extendEnv: false,
      reject: false,
      all: true,
      stdin: "ignore",
    });
  const called = async () => (await readFile(calls, "utf8").catch(() => "")).trim();
  return { home, launch, called };
}

describe("the plugin's server launcher", () => {
  const version = readJson(join(PLUGIN, ".claude-plugin", "plugin.json")).then((m) => m.version as string);

  it("with no cadre of its version at hand, runs npx cadre@<version> mcp, not the cadre on PATH", async () => {
    const { launch, called } = await cachedPlugin();
    const run = await launch({ CADRE_PLUGIN_ARGS: "--warm 0" });
    expect(run.exitCode, run.all).toBe(0);
    expect(await called()).toBe(`npx --yes cadre@${await version} mcp --warm 0`);
  });

  it("installed from this repository as a marketplace, runs its built bin/cadre.js", async () => {
    const { home, launch, called } = await cachedPlugin();
    await mkdir(join(home, ".claude", "plugins"), { recursive: true });
    const known = { cadre: { source: { source: "directory", path: REPO }, installLocation: REPO } };
    await writeFile(join(home, ".claude", "plugins", "known_marketplaces.json"), JSON.stringify(known));
    const run = await launch({ CADRE_PLUGIN_ARGS: "--help" });
    expect(run.exitCode, run.all).toBe(0);
    expect(run.all).toContain("usage: cadre mcp");
    expect(await called()).toBe("");
  });
});
