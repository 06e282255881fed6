// The command line's conventions, on the real bin/cadre.js: help that lists every option and
// environment variable, -V/--version, a suggestion for a mistyped flag or command, exit codes.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cadre, repo } from "../support/cli.ts";

const SUBCOMMANDS = ["run", "send", "stop", "interrupt", "validate", "mcp", "agents", "worker", "ui", "doctor"];

/** Every CADRE_* variable the sources read: named as a string, or as process.env.X / env.X. */
async function environmentVariables(): Promise<string[]> {
  const names = new Set<string>();
  for (const entry of await readdir(join(repo, "src"), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const text = await readFile(join(entry.parentPath, entry.name), "utf8");
    for (const match of text.matchAll(/(?:"|env\.)(CADRE_[A-Z0-9_]+)/g)) names.add(match[1]!);
  }
  return [...names].sort();
}

describe("cadre --help", () => {
  it("lists the commands, the options users reach for, every CADRE_* variable cadre reads, and the exit codes", async () => {
    const help = await cadre(["--help"]);
    expect([help.exitCode, help.stderr]).toEqual([0, ""]);
    for (const command of [...SUBCOMMANDS, "help"]) expect(help.stdout).toMatch(new RegExp(`^ {2}cadre ${command}\\b`, "m"));
    for (const flag of [
      "--rehearse",
      "--resume",
      "--fresh",
      "--args",
      "--workflow",
      "--run-id",
      "--redis",
      "--ui",
      "--json",
      "--warm",
      "--http",
      "-V, --version",
    ])
      expect(help.stdout).toContain(flag);
    const variables = await environmentVariables();
    expect(variables).toEqual(expect.arrayContaining(["CADRE_CLAUDE_BIN", "CADRE_DEBUG", "CADRE_MCP_TOKEN", "CADRE_UI_TOKEN"]));
    for (const name of [...variables, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "NO_COLOR"])
      expect(help.stdout).toMatch(new RegExp(`^ {2}${name}\\b`, "m"));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the swarm file's own syntax, shown as it is written.
    expect(help.stdout).toContain("${VAR:-default}");
    expect(help.stdout).toMatch(/^Exit status:\n {2}0 +success\n {2}1 .*\n.*\n {2}2 .*\n {2}129, 130, 143 /m);
    // It points to a README that is there, in a clone too (no node_modules/cadre in one).
    expect(help.stdout.trim().split("\n").at(-1)).toBe(`More: cadre <command> --help, and ${join(repo, "README.md")}.`);
    // No command is the same as --help; `help <command>` is that command's --help.
    expect((await cadre([])).stdout).toBe(help.stdout);
    expect(help.stdout).toMatch(/^ {2}cadre run <file> .*workflow script/m);
    const runHelp = await cadre(["run", "--help"]);
    // cadre run's help names both kinds of file and every option, with the kinds it applies to.
    expect(runHelp.stdout).toMatch(/^usage: cadre run <swarm\.\(yaml\|json\) \| script\.js>/);
    for (const section of ["Swarm files only:", "Workflow scripts only:", "--args JSON|@FILE", "--budget-usd USD", "--fresh"])
      expect(runHelp.stdout).toContain(section);
    expect((await cadre(["help", "run"])).stdout).toBe(runHelp.stdout);
  });

  it("-V and --version print the version (and -v, as npm and node have it)", async () => {
    const { version } = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as { version: string };
    for (const flag of ["-V", "--version", "-v"]) {
      const result = await cadre([flag]);
      expect([result.exitCode, result.stdout, result.stderr]).toEqual([0, `cadre ${version}`, ""]);
    }
  });

  it.each(SUBCOMMANDS)("cadre %s: -h and --help show its usage, options and exit codes", async (command) => {
    const short = await cadre([command, "-h"]);
    expect([short.exitCode, short.stderr]).toEqual([0, ""]);
    expect(short.stdout).toMatch(new RegExp(`^usage: cadre ${command}\\b`));
    expect(short.stdout).toMatch(/^ {2}-h, --help +show this help$/m);
    expect(short.stdout).toMatch(/^Exit status: 0 [\s\S]*?\b2 [\s\S]*?wrong/m);
    expect((await cadre([command, "--help"])).stdout).toBe(short.stdout);
  });
});

describe("a mistyped flag or command", () => {
  it.each([
    [
      ["run", "swarm.yaml", "--rehears"],
      "cadre run: unknown option --rehears (did you mean --rehearse?); usage: cadre run <swarm.(yaml|json) | script.js>",
    ],
    [["run", "swarm.yaml", "--Resume"], "cadre run: unknown option --Resume (did you mean --resume?); usage: cadre run"],
    [["validate", "--hlep"], "cadre validate: unknown option --hlep (did you mean --help?); usage: cadre validate"],
    [["mcp", "--htp", "127.0.0.1:0"], "cadre mcp: unknown option --htp (did you mean --http?)"],
    [["mcp", "--warm-up", "2"], "cadre mcp: unknown option --warm-up (did you mean --warm?)"],
    [["agents", "--hepl"], "cadre agents: unknown option --hepl (did you mean --help?); usage: cadre agents"],
    [["worker", "--redis", "redis://127.0.0.1:1", "--nme", "a"], "cadre worker: unknown option --nme (did you mean --name?); usage: cadre worker"],
    [["ui", "--tokn", "x"], "cadre ui: unknown option --tokn (did you mean --token?)"],
    [["doctor", "--reddis", "redis://127.0.0.1:1"], "cadre doctor: unknown option --reddis (did you mean --redis?); usage: cadre doctor"],
    [["--verison"], "cadre: unknown option --verison (did you mean --version?); see cadre --help"],
    [["run", "swarm.yaml", "--zzz"], "cadre run: unknown option --zzz; usage: cadre run"],
  ])("cadre %j: exit 2, one line with the suggestion", async (args, start) => {
    const result = await cadre(args);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.split("\n")).toHaveLength(1);
    expect(result.stderr.startsWith(start), result.stderr).toBe(true);
    expect(result.stderr).not.toMatch(/Unknown option|'/);
  });

  it("a flag without its value, a value on a switch and a stray argument are said plainly", async () => {
    const said = async (args: string[]) => {
      const result = await cadre(args);
      expect(result.exitCode).toBe(2);
      return result.stderr.replace(/; usage: .*/, "");
    };
    expect(await said(["run", "swarm.yaml", "--out"])).toBe("cadre run: --out needs a value");
    expect(await said(["run", "swarm.yaml", "-o", "--json"])).toBe('cadre run: -o needs a value (to give "--json", write --out=--json)');
    expect(await said(["run", "swarm.yaml", "--json=yes"])).toBe("cadre run: --json takes no value");
    expect(await said(["worker", "stray"])).toBe('cadre worker: unexpected argument "stray"');
    expect(await said(["agents", "stray"])).toBe('cadre agents: unexpected argument "stray"');
  });

  it("an unknown command gets the closest one", async () => {
    const typo = await cadre(["rnu", "swarm.yaml"]);
    expect([typo.exitCode, typo.stderr]).toEqual([2, 'cadre: unknown command "rnu" (did you mean "run"?); see cadre --help']);
    const validate = await cadre(["valdate", "swarm.yaml"]);
    expect([validate.exitCode, validate.stderr]).toEqual([2, 'cadre: unknown command "valdate" (did you mean "validate"?); see cadre --help']);
    const doctor = await cadre(["help", "docter"]);
    expect([doctor.exitCode, doctor.stderr]).toEqual([2, 'cadre: unknown command "docter" (did you mean "doctor"?); see cadre --help']);
    // "deploy" is near enough to "replay" to be offered it.
    const far = await cadre(["kubernetes"]);
    expect([far.exitCode, far.stderr]).toEqual([2, 'cadre: unknown command "kubernetes"; see cadre --help']);
  });
});
