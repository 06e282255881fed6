#!/usr/bin/env node
// Runs cadre for the plugin (`cadre.mjs mcp` is its MCP server; the plugin's bin/ is on the PATH of Claude's Bash, so
// its commands run `cadre.mjs validate …`): always the cadre of the plugin's own version, never a `cadre` on PATH.
// Claude Code copies an installed plugin into its cache, so a path relative to the repository does not survive
// install. In order: the repository around this folder (a plugin run in place, `claude --plugin-dir`); the
// directory marketplace it was installed from (a clone or an npm install of cadre, recorded by
// `claude plugin marketplace add`), when it has a built cadre of this version; else `npx cadre@<version>`.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { version } = JSON.parse(readFileSync(join(root, ".claude-plugin", "plugin.json"), "utf8"));

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** bin/cadre.js of a cadre checkout or package of this version, with its built dist/. */
function cadreIn(dir) {
  const manifest = readJson(join(dir, "package.json"));
  const bin = join(dir, "bin", "cadre.js");
  if (manifest?.name !== "cadre" || manifest.version !== version) return undefined;
  return existsSync(bin) && existsSync(join(dir, "dist", "cli", "main.js")) ? bin : undefined;
}

function marketplaceDirs() {
  const config = process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude");
  const known = readJson(join(config, "plugins", "known_marketplaces.json")) ?? {};
  return Object.values(known).flatMap((m) => (typeof m?.installLocation === "string" ? [m.installLocation] : []));
}

// CADRE_PLUGIN_ARGS adds options to the MCP server, space-separated, e.g. "--config swarm.yaml --warm 2".
const args = process.argv.slice(2);
if (args[0] === "mcp") args.push(...(process.env.CADRE_PLUGIN_ARGS ?? "").split(/\s+/).filter((arg) => arg !== ""));
const bin = [resolve(root, ".."), ...marketplaceDirs()].map(cadreIn).find(Boolean);
const [command, commandArgs] = bin ? [process.execPath, [bin, ...args]] : ["npx", ["--yes", `cadre@${version}`, ...args]];
const child = spawn(command, commandArgs, { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  process.stderr.write(`cadre plugin: cannot start ${command}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
