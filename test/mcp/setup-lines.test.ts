// The setup line `cadre mcp --help` shows works as printed: the real `claude mcp add` with a HOME of its own,
// then `claude mcp list` says Connected, from outside the clone too. Without --scope user, only where it was added.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { claudeOnPath } from "../support/claude.ts";
import { bin, repo } from "../support/cli.ts";
import { tempHome } from "../support/rehearsal.ts";

/** A shell a person types in: only PATH (with claude on it) and a HOME of its own. */
async function shell() {
  const home = await tempHome("cadre-mcp-setup-");
  const env = { PATH: `${await claudeOnPath(join(home, "bin"))}:${process.env.PATH ?? ""}`, HOME: home };
  const at = async (name: string) => {
    const dir = join(home, name);
    await mkdir(dir, { recursive: true });
    return dir;
  };
  const run = (line: string, cwd: string) => execa("bash", ["-c", line], { cwd, env, extendEnv: false, reject: false, timeout: 120_000 });
  return { at, run };
}

/** The `claude mcp add` line of `cadre mcp --help`, as printed. */
async function helpLine(): Promise<string> {
  const { stdout } = await execa("node", [bin, "mcp", "--help"], { cwd: repo });
  const line = stdout.split("\n").find((text) => text.trim().startsWith("claude mcp add"));
  if (line === undefined) throw new Error(`cadre mcp --help shows no claude mcp add line:\n${stdout}`);
  return line.trim();
}

describe("cadre mcp's setup line", () => {
  it("registers cadre for every directory: claude mcp list says Connected in the clone and outside it", { timeout: 300_000 }, async () => {
    const line = await helpLine();
    expect(line).toContain("--scope user");
    expect(line).not.toContain("npx cadre");
    const { at, run } = await shell();
    const added = await run(line, await at("somewhere"));
    expect(added.exitCode, added.stderr).toBe(0);
    for (const cwd of [await at("elsewhere"), repo]) {
      const listed = await run("claude mcp list", cwd);
      expect(listed.stdout, listed.stderr).toMatch(/^cadre: node .*bin\/cadre\.js mcp - ✔ Connected$/m);
    }
    // The offline form the help names connects too.
    const { at: atOffline, run: runOffline } = await shell();
    const rehearsed = await runOffline(`${line} --rehearse --config ${join(repo, "examples", "code-review.yaml")}`, await atOffline("here"));
    expect(rehearsed.exitCode, rehearsed.stderr).toBe(0);
    expect((await runOffline("claude mcp list", await atOffline("there"))).stdout).toMatch(/^cadre: .* --rehearse --config .* - ✔ Connected$/m);
  });

  it("without --scope user, registers cadre for the directory it was added in only", { timeout: 300_000 }, async () => {
    const line = (await helpLine()).replace(" --scope user", "");
    const { at, run } = await shell();
    const clone = await at("project");
    expect((await run(line, clone)).exitCode).toBe(0);
    expect((await run("claude mcp list", clone)).stdout).toMatch(/^cadre: .* - ✔ Connected$/m);
    expect((await run("claude mcp list", await at("elsewhere"))).stdout).not.toMatch(/^cadre:/m);
  });
});
