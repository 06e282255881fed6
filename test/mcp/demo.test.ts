// `cadre mcp` tried with no account: --demo's scripted parent, --rehearse's default replies, and what a terminal sees.
import { existsSync } from "node:fs";
import process from "node:process";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { bin, repo } from "../support/cli.ts";
import { call, startStdioCadre } from "../support/mcp.ts";
import { tempHome } from "../support/rehearsal.ts";

/** As a newcomer's shell runs it: only PATH and a HOME of its own. */
async function newcomer(args: string[], input?: string) {
  const home = await tempHome("cadre-mcp-demo-test-");
  return execa("node", [bin, ...args], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? "", HOME: home },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
    ...(input === undefined ? {} : { input }),
  });
}

describe("cadre mcp offline", () => {
  it("--demo: a real claude parent spawns a child through cadre's tools, and shows each call and the child's answer", async () => {
    const demo = await newcomer(["mcp", "--demo"]);
    expect(demo.exitCode, `${demo.stdout}\n${demo.stderr}`).toBe(0);
    expect(demo.stdout).toContain("parent calls spawn_session");
    expect(demo.stdout).toContain('Scripted reply to "What is the capital of France?"');
    expect(demo.stdout).toContain("parent calls query_session");
    expect(demo.stdout).toContain('Scripted reply to "And of Italy?"');
    expect(demo.stdout).toContain("claude mcp add --scope user cadre");
    expect(demo.stderr).toBe("");
  });

  it("--demo takes no other options", async () => {
    const demo = await newcomer(["mcp", "--demo", "--warm", "0"]);
    expect(demo.exitCode).toBe(2);
    expect(demo.stderr).toBe("cadre mcp: --demo takes no other options");
  });

  it("--rehearse with no scripts: every child answers with a scripted reply to its prompt", async () => {
    const { client } = await startStdioCadre(null, ["--rehearse"]);
    const first = await call(client, "spawn_session", { name: "anyone", prompt: "hello there" });
    expect(first.structuredContent?.result).toContain('Scripted reply to "hello there"');
    const second = await call(client, "query_session", { session_id: "anyone", prompt: "again" });
    expect(second.structuredContent?.result).toContain('Scripted reply to "again"');
  });

  // util-linux's script(1) gives the command a terminal; its end of input there is Ctrl-D.
  it.runIf(process.platform === "linux" && existsSync("/usr/bin/script"))(
    "on a terminal: says it waits for a client; Ctrl-D ends it quietly",
    async () => {
      const home = await tempHome("cadre-mcp-tty-test-");
      const typed = await execa("script", ["-qec", `${process.execPath} ${bin} mcp --rehearse`, "/dev/null"], {
        cwd: repo,
        env: { PATH: process.env.PATH ?? "", HOME: home },
        extendEnv: false,
        input: "",
        reject: false,
        timeout: 60_000,
      });
      expect(typed.exitCode).toBe(0);
      expect(typed.stdout.replaceAll("\r", "").trim()).toBe(
        "cadre mcp: serving MCP on stdio, waiting for a client (an MCP client starts this command; Ctrl-C ends it)",
      );
    },
  );

  it("ends quietly at the end of its input, while its spare child is still starting", async () => {
    const served = await newcomer(["mcp", "--rehearse"], "");
    expect(served.exitCode).toBe(0);
    expect(served.stderr).toBe("");
  });
});
