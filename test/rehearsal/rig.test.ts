import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv, REHEARSAL_API_KEY } from "../../src/rehearsal/env.ts";
import { startClaude } from "../support/claude.ts";
import { isAlive } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";

/** The test rig itself: what one test starts, the next one no longer sees. */

describe("test rig", () => {
  const left: { pid?: number; home?: string; url?: string } = {};

  it("starts the real CLI with its own HOME and answers a turn", async () => {
    const server = await createRehearsal({ default: [{ text: "rig ok" }] });
    const claude = await startClaude({ baseUrl: server.url });
    await claude.initialize();
    claude.sendUser("ping");
    const types: string[] = [];
    for await (const line of claude.messages) {
      types.push(line.type);
      if (line.type === "result") {
        expect(line.result).toBe("rig ok");
        break;
      }
    }
    expect(types).toEqual(expect.arrayContaining(["system", "assistant", "result"]));
    expect(claude.received.map((line) => line.type)).toEqual(["control_response", ...types]);
    expect(isAlive(claude.pid)).toBe(true);
    expect(existsSync(claude.home)).toBe(true);
    Object.assign(left, { pid: claude.pid, home: claude.home, url: server.url });
    // The test ends with the process running: the rig must end it.
  });

  it("ended the previous test's process, server and HOME", async () => {
    expect(left.pid).toBeTypeOf("number");
    expect(isAlive(left.pid!)).toBe(false);
    expect(existsSync(left.home!)).toBe(false);
    await expect(fetch(`${left.url}/v1/messages`, { method: "POST", body: "{}" })).rejects.toThrow();
  });
});

describe("offlineClaudeEnv", () => {
  it("is a complete, hermetic environment: path and locale from the parent, nothing else", () => {
    const env = offlineClaudeEnv({
      baseUrl: "http://127.0.0.1:9/s/x",
      home: "/tmp/h",
      parentEnv: {
        PATH: "/usr/bin",
        LANG: "C.UTF-8",
        LC_ALL: "C.UTF-8",
        CLAUDE_CONFIG_DIR: "/home/me/.claude",
        ANTHROPIC_AUTH_TOKEN: "real-token",
        CLAUDE_CODE_USE_BEDROCK: "1",
        ANTHROPIC_MODEL: "opus",
      },
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      HOME: "/tmp/h",
      USERPROFILE: "/tmp/h",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9/s/x",
      ANTHROPIC_API_KEY: REHEARSAL_API_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      ENABLE_TOOL_SEARCH: "false",
    });
  });
});
