// The plugin's eval suite, run by `claude plugin eval` offline against the scripted model. A scripted model cannot
// say whether the skill helps (that needs a real model and a login); what it checks is the wiring: every case loads,
// every run of both arms completes, and the runs with the plugin offer Claude the cadre skill and commands while the
// baseline runs without it do not.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { CLAUDE_BIN } from "../support/claude.ts";
import { PLUGIN, readJson } from "../support/plugin.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { conversationText } from "../support/requests.ts";

const CASES = ["fan-out", "one-line", "swarm-file"];

describe("the plugin's eval suite", () => {
  it("loads every case and, with the plugin, offers the cadre skill and commands; without it, not", { timeout: 240_000 }, async () => {
    const server = await createRehearsal({ default: [{ text: "SCRIPTED ANSWER: git stash pop reapplies the latest stash." }] });
    const home = await tempHome("cadre-plugin-eval-");
    const out = join(home, "out");
    await mkdir(out);
    const run = await execa(
      CLAUDE_BIN,
      ["plugin", "eval", PLUGIN, "--trust-plugin", "--no-publish", "--runs", "1", "--threshold", "0"].concat([
        "--output-dir",
        out,
        "--report",
        join(out, "report.html"),
        "--json",
        join(out, "result.json"),
      ]),
      {
        cwd: home,
        env: { ...offlineClaudeEnv({ baseUrl: server.url, home }), TMPDIR: home },
        extendEnv: false,
        reject: false,
        all: true,
        timeout: 200_000,
      },
    );
    expect(run.exitCode, run.all).toBe(0);
    const result = await readJson(join(out, "result.json"));
    expect(result.suite.plugins).toEqual([
      expect.objectContaining({ name: "cadre", version: (await readJson(join(PLUGIN, ".claude-plugin/plugin.json"))).version }),
    ]);
    expect(result.cases.map((c: { name: string }) => c.name).sort()).toEqual(CASES);
    for (const c of result.cases) {
      for (const arm of ["with", "without"]) {
        expect(c.arms[arm], `${c.name} ${arm}`).toHaveLength(1);
        expect(c.arms[arm][0].error, `${c.name} ${arm}`).toBeNull();
      }
    }
    // One run per case and arm, each asking the model at least once.
    const prompts = server.requests.filter((r) => r.outcome === "played").map((r) => `${r.system}\n${conversationText(r)}`);
    const withPlugin = prompts.filter((p) => p.includes("cadre:cadre"));
    expect(withPlugin.length).toBeGreaterThanOrEqual(CASES.length);
    expect(prompts.length - withPlugin.length).toBeGreaterThanOrEqual(CASES.length);
    for (const p of withPlugin) {
      expect(p).toContain("Delegate work to several Claude Code sessions at once through cadre");
      for (const command of ["cadre:run", "cadre:new", "cadre:status"]) expect(p).toContain(command);
    }
  });
});
