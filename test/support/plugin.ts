import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { execa } from "execa";
import { CLAUDE_BIN } from "./claude.ts";
import { tempHome } from "./rehearsal.ts";

export const REPO = resolve(import.meta.dirname, "../..");
export const PLUGIN = join(REPO, "plugin");

export async function readJson(path: string): Promise<any> {
  return JSON.parse(await readFile(path, "utf8"));
}

/** The pinned CLI with a HOME of its own, offline; its output, never thrown. */
export async function claudeIn(home: string, args: string[], cwd = home) {
  return execa(CLAUDE_BIN, args, {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home, USERPROFILE: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
    extendEnv: false,
    reject: false,
    all: true,
    timeout: 90_000,
  });
}

/** A fresh HOME where this repository is added as a marketplace and cadre installed from it. */
export async function homeWithPlugin(): Promise<{ home: string; install: string }> {
  const home = await tempHome("cadre-plugin-");
  const added = await claudeIn(home, ["plugin", "marketplace", "add", REPO]);
  if (added.exitCode !== 0) throw new Error(`marketplace add failed:\n${added.all}`);
  const installed = await claudeIn(home, ["plugin", "install", "cadre@cadre"]);
  if (installed.exitCode !== 0) throw new Error(`plugin install failed:\n${installed.all}`);
  return { home, install: installed.all };
}
