import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cadre, repo } from "../support/cli.ts";

describe("cadre validate", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cadre-validate-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("prints a one-line summary and exits 0 for a valid config", async () => {
    const result = await cadre(["validate", "test/fixtures/config/swarm.yaml"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('OK test/fixtures/config/swarm.yaml: swarm "review-swarm", 5 tasks (from 3 entries), 2 agents (reviewer, fixer)');
    expect(result.stderr).toBe("");
  });

  it("prints every issue as `path: message (hint)` and exits 2: the schema's and the semantic ones in one pass, in file order", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(
      file,
      ["agents:", "  reviewer: ./missing.md", "tasks:", "  - name: a", "    promt: hi", "  - { name: b, prompt: p, agent: reviewr }"].join("\n"),
    );
    const result = await cadre(["validate", file]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      `agents.reviewer: agent file not found: ${join(dir, "missing.md")} (paths are relative to the config file's directory (${dir}))`,
      "tasks[0].prompt: required key is missing",
      'tasks[0].promt: unknown key (did you mean "prompt"?)',
      'tasks[1].agent: unknown agent "reviewr" (did you mean "reviewer"?)',
      `cadre validate: ${file} is not valid (4 problems)`,
    ]);
  });

  it("gives a one-line error for a missing file or a missing argument", async () => {
    const missing = await cadre(["validate", "nope.yaml"]);
    expect([missing.exitCode, missing.stderr]).toEqual([2, `cadre validate: no such file: ${join(repo, "nope.yaml")}`]);
    const none = await cadre(["validate"]);
    expect([none.exitCode, none.stderr]).toEqual([2, "cadre validate: no config file given; usage: cadre validate <config.(yaml|json) | script.js>"]);
  });
});

describe("cadre dispatcher", () => {
  it("lists the commands in --help, and refuses the ones not built yet", async () => {
    const help = await cadre(["--help"]);
    expect(help.exitCode).toBe(0);
    for (const command of ["run", "validate", "mcp", "agents"]) expect(help.stdout).toContain(`cadre ${command}`);
    // Hermetic: --rehearse never reaches a real model, and this config has no scripts, so it stops at exit 2.
    const run = await cadre(["run", "test/fixtures/config/swarm.yaml", "--rehearse"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('rehearsal: no script for task "fix-a.ts"');
  });
});
