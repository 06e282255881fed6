// Helpers for the tests that run `cadre run` as a user does: node bin/cadre.js, a real claude, the rehearsal server.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll } from "vitest";
import { type CliMessage, parseCliMessage } from "../../src/protocol/index.ts";
import { NdjsonDecoder } from "../../src/protocol/ndjson.ts";
import { readJournal, withJournal } from "../../src/run/record/journal.ts";
import { type Summary, SummarySchema } from "../../src/run/record/schema.ts";

export const repo = fileURLToPath(new URL("../../", import.meta.url));
export const bin = join(repo, "bin", "cadre.js");

/**
 * A temp folder for one test file's swarm configs and runs, made before its tests and removed
 * after them: `path()` names a place in it, `config()` writes a config there and returns its path.
 */
export function swarmFolder(prefix: string) {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return {
    path: (...names: string[]) => join(dir, ...names),
    async config(name: string, lines: string[]): Promise<string> {
      const file = join(dir, name);
      await writeFile(file, `${lines.join("\n")}\n`);
      return file;
    },
  };
}

/**
 * Runs the real command line in `cwd` (the repository unless given), with the test's environment and `env`, killed past
 * `timeout` ms when given; never rejects (the exit code is part of what tests check).
 */
export function cadre(args: string[], options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}) {
  return execa("node", [bin, ...args], { cwd: options.cwd ?? repo, env: options.env, timeout: options.timeout, reject: false });
}

export async function readSummary(outDir: string): Promise<Summary> {
  return SummarySchema.parse(JSON.parse(await readFile(join(outDir, "summary.json"), "utf8")));
}

/** A run's record as --resume and the dashboard read it: summary.json, with what its journal has that the summary does not yet. */
export async function readRunRecord(outDir: string): Promise<Summary> {
  return withJournal(await readSummary(outDir), (await readJournal(outDir)).values);
}

/** A transcript decoded the way cadre reads the CLI: every line must be JSON. */
export async function decodeTranscript(path: string): Promise<CliMessage[]> {
  const decoder = new NdjsonDecoder();
  const events = [...decoder.push(await readFile(path)), ...decoder.end()];
  const malformed = events.filter((event) => event.kind === "malformed");
  if (malformed.length > 0) throw new Error(`${path}: ${malformed.length} lines are not JSON`);
  return events.map((event) => parseCliMessage((event as { value: unknown }).value));
}
