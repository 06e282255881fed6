// `cadre mcp` stopped however it is stopped: SIGINT, SIGTERM, SIGHUP, SIGKILL, or its parent
// closing stdin in the middle of a child's turn. No claude child or tool it runs is left, and
// no rehearsal HOME is left in the temp directory.
import { execa, type ResultPromise } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import { CADRE_BIN, scriptedWorkspace } from "../support/mcp.ts";
import { MINUTE_OF_BASH, rehearsalHomesLeft, survivors, treeWithBashTool } from "../support/reliability.ts";
import { until } from "../support/wait.ts";

const SCRIPTS = { quick: [{ text: "quick done" }], busy: [{ tool_use: MINUTE_OF_BASH }, { text: "too late" }] };

/** `cadre mcp` over stdio, spoken to line by line, so that the test alone decides when stdin closes. */
class RawMcp {
  readonly #responses = new Map<number, unknown>();
  #nextId = 1;

  constructor(
    readonly process: ResultPromise,
    readonly tmp: string,
  ) {
    let partial = "";
    process.stdout!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line) as { id?: number };
        if (typeof message.id === "number") this.#responses.set(message.id, message);
      }
    });
  }

  static async start(): Promise<RawMcp> {
    const { home, cwd, tmp, scriptsFile } = await scriptedWorkspace(SCRIPTS);
    const child = execa(process.execPath, [CADRE_BIN, "mcp", "--scripts", scriptsFile], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp },
      extendEnv: false,
      buffer: false,
      reject: false,
    });
    onTestFinished(async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await child;
    });
    const mcp = new RawMcp(child, tmp);
    await mcp.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } });
    mcp.#send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return mcp;
  }

  #send(message: unknown): void {
    this.process.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    this.#send({ jsonrpc: "2.0", id, method, params });
    return until(() => this.#responses.get(id), 60_000, `the answer to ${method}`);
  }

  /** One child idle after its turn, one busy in a minute-long Bash tool: every process below cadre then. */
  async childrenAtWork(): Promise<{ pid: number; comm: string }[]> {
    await this.request("tools/call", { name: "spawn_session", arguments: { prompt: "go", name: "quick" } });
    await this.request("tools/call", { name: "spawn_session", arguments: { prompt: "go", name: "busy", wait_s: 0, allowed_tools: ["Bash"] } });
    return treeWithBashTool(this.process.pid!);
  }
}

describe("cadre mcp under signals", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)("%s: the server closes every child, tools included, and exits 0", async (signal) => {
    const mcp = await RawMcp.start();
    const tree = await mcp.childrenAtWork();
    mcp.process.kill(signal);
    const result = await mcp.process;
    expect(result.exitCode).toBe(0);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    expect(await rehearsalHomesLeft(mcp.tmp)).toEqual([]);
  });

  it("SIGKILL: every child and every tool it runs ends within 5 s, and the rehearsal HOME is removed", async () => {
    const mcp = await RawMcp.start();
    const tree = await mcp.childrenAtWork();
    mcp.process.kill("SIGKILL");
    const killedAt = Date.now();
    await mcp.process;
    expect(await survivors(tree, killedAt + 5_000)).toEqual([]);
    expect(await rehearsalHomesLeft(mcp.tmp, 5_000)).toEqual([]);
  });

  it("the parent closing stdin mid-turn: the server ends every child, then exits 0", async () => {
    const mcp = await RawMcp.start();
    const tree = await mcp.childrenAtWork();
    mcp.process.stdin!.end();
    const result = await mcp.process;
    expect(result.exitCode).toBe(0);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    expect(await rehearsalHomesLeft(mcp.tmp)).toEqual([]);
  });
});
