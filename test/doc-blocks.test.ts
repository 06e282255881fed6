// Every code block of README.md and docs/**/*.md runs as written: each ```js, ```ts and ```sh block is run, in
// document order, from the clone's directory, as a person would paste it (js as an .mjs file under node, ts under
// tsx, sh under bash -e), offline: HOME is a fresh directory and the model is the rehearsal server (script
// "default"), so a block that talks to Claude talks to the scripted model. Other languages (yaml, json, …) are
// not run. A block that cannot run here (it needs the registry, Docker, Redis, or runs until Ctrl-C) is marked on
// the line just above its fence, with the reason:
//
//   <!-- not run: needs Redis and hosts -->
//   ```sh
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import process from "node:process";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { type RehearsalServer, startRehearsalServer } from "../src/rehearsal/server.ts";
import { claudeOnPath } from "./support/claude.ts";
import { repo } from "./support/cli.ts";

/** How each language runs: the file's extension and the command, or undefined for languages that are not run. */
const RUNNERS: Record<string, { extension: string; command: (file: string) => [string, string[]] }> = {
  js: { extension: "mjs", command: (file) => ["node", [file]] },
  javascript: { extension: "mjs", command: (file) => ["node", [file]] },
  ts: { extension: "mts", command: (file) => [join(repo, "node_modules", ".bin", "tsx"), [file]] },
  typescript: { extension: "mts", command: (file) => [join(repo, "node_modules", ".bin", "tsx"), [file]] },
  sh: { extension: "sh", command: (file) => ["bash", ["-e", file]] },
  bash: { extension: "sh", command: (file) => ["bash", ["-e", file]] },
  shell: { extension: "sh", command: (file) => ["bash", ["-e", file]] },
};
const NOT_RUN = /^<!--\s*not run:\s*(\S.*?)\s*-->$/;

interface Block {
  /** Where it stands: `README.md:491`. */
  at: string;
  language: string;
  code: string;
  /** Why it is not run, when it is marked so. */
  notRun: string | undefined;
}

/** The fenced blocks of a markdown text, with the language of their fence and the mark above them. */
function codeBlocks(text: string, file: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(```+|~~~+)\s*([\w+-]*)/.exec(lines[index]!);
    if (open === null) continue;
    const fence = open[1]!;
    const end = lines.findIndex((line, at) => at > index && line.trim() === fence);
    const close = end === -1 ? lines.length : end;
    const notRun = NOT_RUN.exec(lines[index - 1]?.trim() ?? "")?.[1];
    blocks.push({ at: `${file}:${index + 1}`, language: open[2]!.toLowerCase(), code: lines.slice(index + 1, close).join("\n"), notRun });
    index = close;
  }
  return blocks;
}

/** README.md and every markdown file under docs/, in a stable order. */
function documents(): string[] {
  const docs = readdirSync(join(repo, "docs"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name))
    .sort();
  return ["README.md", ...docs];
}

const blocks = documents().flatMap((file) => codeBlocks(readFileSync(join(repo, file), "utf8"), file));
const runnable = blocks.filter((block) => RUNNERS[block.language] !== undefined && block.notRun === undefined);
const marked = blocks.filter((block) => RUNNERS[block.language] !== undefined && block.notRun !== undefined);

const scratch = join(repo, ".cadre", "doc-blocks");
const runs = join(repo, ".cadre", "runs");
let server: RehearsalServer;
/** A HOME per document, as a person following one page would have: the blocks of a page share theirs. */
const homes = new Map<string, string>();
let runsBefore: Set<string>;
beforeAll(async () => {
  // Any prompt gets an answer, for a few turns of a conversation: what a block that asks Claude needs.
  server = await startRehearsalServer({ scripts: { default: Array.from({ length: 8 }, () => ({ text: "An answer from the scripted model." })) } });
  await mkdir(scratch, { recursive: true });
  runsBefore = new Set(existsSync(runs) ? readdirSync(runs) : []);
});
afterAll(async () => {
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
  for (const home of homes.values()) await rm(home, { recursive: true, force: true });
  // The runs the blocks made in the clone's .cadre/runs.
  for (const name of existsSync(runs) ? readdirSync(runs) : [])
    if (!runsBefore.has(name)) await rm(join(runs, name), { recursive: true, force: true });
});

/** The environment of a document's blocks: offline, with the scripted model, claude on PATH (as for a person who followed the README). */
async function envFor(document: string): Promise<Record<string, string>> {
  let home = homes.get(document);
  if (home === undefined) {
    home = await mkdtemp(join(tmpdir(), "cadre-doc-blocks-"));
    homes.set(document, home);
    await claudeOnPath(join(home, "bin"));
  }
  const path = [join(home, "bin"), join(repo, "node_modules", ".bin"), process.env.PATH ?? ""];
  return { ...offlineClaudeEnv({ baseUrl: server.url, home }), PATH: path.join(":") };
}

describe("the code blocks of the README and docs/", () => {
  it("finds the blocks and their marks", () => {
    const found = codeBlocks("text\n<!-- not run: needs Redis -->\n```sh\nredis-server\n```\n```js\nconsole.log(1)\n```\n", "x.md");
    expect(found).toEqual([
      { at: "x.md:3", language: "sh", code: "redis-server", notRun: "needs Redis" },
      { at: "x.md:6", language: "js", code: "console.log(1)", notRun: undefined },
    ]);
    expect(runnable.length).toBeGreaterThan(0);
  });

  it.skip.each(marked.map((block) => [block.at, block.notRun]))("%s is marked not run: %s", () => {});

  it.each(runnable.map((block) => [block.at, block] as const))("%s runs as written", { timeout: 300_000 }, async (at, block) => {
    const runner = RUNNERS[block.language]!;
    const file = join(scratch, `${at.replaceAll(/[^\w]+/g, "-")}.${runner.extension}`);
    await writeFile(file, `${block.code}\n`);
    const [command, args] = runner.command(relative(repo, file));
    const result = await execa(command, args, {
      cwd: repo,
      env: await envFor(at.slice(0, at.lastIndexOf(":"))),
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 240_000,
    });
    expect(result.exitCode, `${at} (mark it <!-- not run: why --> if it cannot run here):\n${result.all}`).toBe(0);
  });
});
