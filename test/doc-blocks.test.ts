// Every code block of README.md and docs/**/*.md runs as written: each ```js, ```ts and ```sh block is run, in
// document order, from the clone's directory, as a person would paste it (js as an .mjs file under node, ts under
// tsx, sh under bash -e), offline: HOME is a fresh directory and the model is the rehearsal server (script
// "default"), so a block that talks to Claude talks to the scripted model. Other languages (yaml, json, …) are
// not run. The pages of PROJECT_PAGES are for a project that installs cadre: their blocks run in a new project
// (the packed cadre installed, as CommonJS as `npm init -y` makes it), js blocks as .js files there. A block that cannot run here (it needs the registry, Docker, Redis, or runs until Ctrl-C) is marked on
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
import { type InstalledCadre, installPackedCadre } from "./support/installed-package.ts";

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

/** The pages whose blocks run in a new project, as their reader's do: the page says how to make it. */
const PROJECT_PAGES = new Set(["docs/library.md"]);

/** The examples a page's js blocks are, in order: the block is the file after its opening comment lines. */
const EXAMPLE_FILES: Record<string, string[]> = { "docs/library.md": ["examples/library.ts", "examples/run-swarm-file.ts"] };

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
  for (const project of projects.values()) await (await project.catch(() => undefined))?.remove();
  for (const home of homes.values()) await rm(home, { recursive: true, force: true });
  // The runs the blocks made in the clone's .cadre/runs.
  for (const name of existsSync(runs) ? readdirSync(runs) : [])
    if (!runsBefore.has(name)) await rm(join(runs, name), { recursive: true, force: true });
});

/** The new project a page's blocks run in, made once: the packed cadre installed, and package.json as `npm init -y` leaves its type (CommonJS). */
const projects = new Map<string, Promise<InstalledCadre>>();
function projectFor(document: string): Promise<InstalledCadre> {
  let project = projects.get(document);
  if (project === undefined) {
    project = installPackedCadre().then(async (installed) => {
      await execa("npm", ["pkg", "delete", "type"], { cwd: installed.dir });
      return installed;
    });
    projects.set(document, project);
  }
  return project;
}

/** Where a block runs and as what file: the clone and its scratch folder, or a page's project. */
async function placeFor(document: string, at: string, extension: string): Promise<{ cwd: string; file: string }> {
  const name = `${at.replaceAll(/[^\w]+/g, "-")}.${extension}`;
  if (!PROJECT_PAGES.has(document)) return { cwd: repo, file: join(scratch, name) };
  const { dir } = await projectFor(document);
  // A project's reader saves a .js file: it runs as ESM only when package.json says "type": "module".
  return { cwd: dir, file: join(dir, name.replace(/\.mjs$/, ".js")) };
}

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

  it.each(Object.entries(EXAMPLE_FILES))("%s: its js blocks are the example files it names", (document, files) => {
    const code = codeBlocks(readFileSync(join(repo, document), "utf8"), document).filter((block) => block.language === "js");
    const examples = files.map((file) => {
      const lines = readFileSync(join(repo, file), "utf8").split("\n");
      return lines
        .slice(lines.findIndex((line) => !line.startsWith("//")))
        .join("\n")
        .trim();
    });
    expect(code.map((block) => block.code.trim())).toEqual(examples);
  });

  it.skip.each(marked.map((block) => [block.at, block.notRun]))("%s is marked not run: %s", () => {});

  it.each(runnable.map((block) => [block.at, block] as const))("%s runs as written", { timeout: 300_000 }, async (at, block) => {
    const runner = RUNNERS[block.language]!;
    const document = at.slice(0, at.lastIndexOf(":"));
    const { cwd, file } = await placeFor(document, at, runner.extension);
    await writeFile(file, `${block.code}\n`);
    const [command, args] = runner.command(relative(cwd, file));
    const result = await execa(command, args, {
      cwd,
      env: await envFor(document),
      extendEnv: false,
      reject: false,
      all: true,
      timeout: 240_000,
    });
    expect(result.exitCode, `${at} (mark it <!-- not run: why --> if it cannot run here):\n${result.all}`).toBe(0);
  });
});
