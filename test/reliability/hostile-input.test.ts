// Hostile input on the real command line: no `cadre` command prints a stack trace for any
// input; bad input is exit 2 with a one-line reason, an unexpected error one line and exit 1,
// the stack only with CADRE_DEBUG=1.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cadre, readSummary } from "../support/cli.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-hostile-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Hostile input must not hang cadre either: each command is killed after this long. */
const bounded = { timeout: 45_000 };

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

/** A line of a V8 stack trace. */
const STACK_LINE = /^\s+at .+[(:]/m;

/** `&a [*a]`: an alias inside the list it names. */
const SELF_ALIAS = "a: &a [*a]\ntasks: *a\n";

/** The "billion laughs": nine levels of nine aliases each, a few hundred bytes that expand to 9^9 strings. */
function aliasBomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = "abcdefghi";
  for (let i = 1; i < names.length; i++)
    lines.push(
      `${names[i]}: &${names[i]} [${Array(9)
        .fill(`*${names[i - 1]}`)
        .join(",")}]`,
    );
  lines.push("tasks: *i");
  return `${lines.join("\n")}\n`;
}

/** The same bomb in block style, which an agent file's forgiving front-matter reader does not quote away. */
function blockAliasBomb(): string {
  const names = "abcdefghi";
  const lines = ["a: &a", ...Array(9).fill("  - lol")];
  for (let i = 1; i < names.length; i++) lines.push(`${names[i]}: &${names[i]}`, ...Array(9).fill(`  - *${names[i - 1]}`));
  return `${lines.join("\n")}\n`;
}

/** JSON nested far deeper than any config: JSON.parse reads it, a recursive walk would overflow. */
const DEEP_JSON = `{"tasks": ${"[".repeat(50_000)}${"]".repeat(50_000)}}`;

function expectOneLineRefusal(run: { exitCode?: number; stdout: string; stderr: string }, reason: RegExp): void {
  expect(run.stderr, run.stderr).not.toMatch(STACK_LINE);
  expect(run.stdout).not.toMatch(STACK_LINE);
  expect(run.exitCode, run.stderr).toBe(2);
  const lines = run.stderr.split("\n").filter((line) => reason.test(line));
  expect(lines, run.stderr).toHaveLength(1);
}

describe("hostile input", () => {
  it.each(["validate", "run"])("cadre %s: a self-referencing YAML alias is exit 2 with one line", async (command) => {
    const path = await file(`self-${command}.yaml`, SELF_ALIAS);
    expectOneLineRefusal(await cadre([command, path], bounded), /alias.*(refers to|contains) itself/i);
  });

  it.each(["validate", "run"])("cadre %s: an alias bomb is exit 2 with one line", async (command) => {
    const path = await file(`bomb-${command}.yaml`, aliasBomb());
    expectOneLineRefusal(await cadre([command, path], bounded), /too many aliases/i);
  });

  it("cadre mcp --config: an alias bomb is exit 2 with one line", async () => {
    const path = await file("bomb-mcp.yaml", aliasBomb());
    expectOneLineRefusal(await cadre(["mcp", "--config", path], bounded), /too many aliases/i);
  });

  it("cadre mcp --scripts: a self-referencing alias is exit 2 with one line", async () => {
    const path = await file("self-scripts.yaml", "a: &a [*a]\n");
    expectOneLineRefusal(await cadre(["mcp", "--scripts", path], bounded), /alias.*(refers to|contains) itself/i);
  });

  it("cadre validate: JSON nested 50,000 levels deep is exit 2 with one line", async () => {
    const path = await file("deep.json", DEEP_JSON);
    expectOneLineRefusal(await cadre(["validate", path], bounded), /nested more than \d+ levels/);
  });

  it("cadre validate: an agent file whose front matter is an alias bomb is exit 2 with one line", async () => {
    await file("bomb-agent.md", `---\n${blockAliasBomb()}name: x\ndescription: y\n---\nYou are x.\n`);
    const path = await file("uses-bomb-agent.yaml", "agents:\n  x: ./bomb-agent.md\ntasks:\n  - { name: t, agent: x, prompt: hi }\n");
    expectOneLineRefusal(await cadre(["validate", path], bounded), /bomb-agent\.md.*too many aliases/i);
  });

  it("cadre agents: an agent file with an alias bomb is skipped with one line, the others still listed", async () => {
    const project = join(dir, "project");
    await mkdir(join(project, "agents"), { recursive: true });
    await writeFile(join(project, "agents", "bomb.md"), `---\n${blockAliasBomb()}name: bomb\ndescription: y\n---\nYou are x.\n`);
    await writeFile(join(project, "agents", "self.md"), `---\nname: &n [*n]\ndescription: y\n---\nYou are x.\n`);
    await writeFile(join(project, "agents", "fine.md"), "---\nname: fine\ndescription: A fine agent\n---\nYou are fine.\n");
    const run = await cadre(["agents"], { ...bounded, cwd: project, env: { HOME: project } });
    expect(run.stderr).not.toMatch(STACK_LINE);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^fine +A fine agent/m);
    expect(run.stderr.split("\n").filter((line) => line.startsWith("cadre agents: skipping"))).toEqual([
      expect.stringMatching(/^cadre agents: skipping agents\/bomb\.md: .*too many aliases/),
    ]);
    // Like Claude Code, the reader quotes a value that is not valid YAML: the alias becomes a plain name.
    expect(run.stdout).toMatch(/^&n \[\*n\] +y +agents\/self\.md$/m);
  });

  it("cadre run --out inside a file: exit 2 with one line", async () => {
    const config = await file("ok.yaml", "tasks:\n  - { name: a, prompt: hi }\nrehearsal:\n  a: [{ text: hi }]\n");
    const blocker = await file("not-a-dir", "x");
    expectOneLineRefusal(
      await cadre(["run", config, "--rehearse", "--out", join(blocker, "out")], bounded),
      /output directory cannot be used: .*not a directory/,
    );
  });

  it.each([
    [
      "args nested 100,000 deep",
      () => file("deep-args.json", `${"[".repeat(100_000)}${"]".repeat(100_000)}`),
      /^cadre run: --args: nested more than 64 levels deep/,
    ],
    [
      "args read from /dev/zero",
      async () => "/dev/zero",
      /^cadre run: --args @\/dev\/zero: cannot read \/dev\/zero \(\/dev\/zero is not a regular file\)/,
    ],
  ])("cadre run script.js --args @file: %s is exit 2 with one line", async (_name, argsFile, reason) => {
    const script = await file("args.js", 'export const meta = { name: "args", description: "takes args" }\nreturn args\n');
    expectOneLineRefusal(await cadre(["run", script, "--args", `@${await argsFile()}`, "--out", join(dir, "args-out")], bounded), reason);
  });

  it("workflow({scriptPath}) naming a FIFO, /dev/zero or /etc/shadow: the run ends at once with the reason, and its record", async () => {
    const project = join(dir, "fifo-project");
    await mkdir(project);
    await execa("mkfifo", [join(project, "pipe.js")]);
    const refs = ["pipe.js", "/dev/zero", "/etc/shadow"];
    await writeFile(
      join(project, "nest.js"),
      `export const meta = { name: "nest", description: "nests" }\nconst seen = []\nfor (const scriptPath of ${JSON.stringify(refs)}) { try { await workflow({ scriptPath }) } catch (e) { seen.push(e.message) } }\nreturn seen\n`,
    );
    const out = join(project, "out");
    const run = await cadre(["run", "nest.js", "--out", out], { ...bounded, cwd: project });
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await readSummary(out)).result).toEqual([
      "Workflow script file pipe.js is not a regular file",
      expect.stringMatching(/^workflow\(\): scriptPath must be a file in the project .*: \/dev\/zero$/),
      expect.stringMatching(/^workflow\(\): scriptPath must be a file in the project .*: \/etc\/shadow$/),
    ]);
  });

  it("an unexpected error is one line and exit 1; CADRE_DEBUG=1 adds the stack", async () => {
    // A file where cadre puts its transcripts directory: nothing checks for that, so it fails deep inside.
    const config = await file("ok2.yaml", "tasks:\n  - { name: a, prompt: hi }\nrehearsal:\n  a: [{ text: hi }]\n");
    const out = join(dir, "blocked-out");
    await mkdir(out);
    await writeFile(join(out, "transcripts"), "in the way");
    const plain = await cadre(["run", config, "--rehearse", "--out", out], bounded);
    expect(plain.stderr).not.toMatch(STACK_LINE);
    expect(plain.exitCode, plain.stderr).toBe(1);
    expect(plain.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^cadre run: unexpected error: .*transcripts.*CADRE_DEBUG=1/)]);

    const debug = await cadre(["run", config, "--rehearse", "--out", out], { ...bounded, env: { CADRE_DEBUG: "1" } });
    expect(debug.exitCode).toBe(1);
    expect(debug.stderr).toMatch(STACK_LINE);
  });
});
