// `cadre doctor` on the real command line, with the real claude CLI asked about its login in a
// temporary HOME, and the API played by a loopback port: closed, the rehearsal server, a refusal.
import http from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import manifest from "../../package.json" with { type: "json" };
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { bin, repo } from "../support/cli.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

/** A loopback port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** cadre doctor in a complete environment: only PATH and locale from this one, HOME a fresh directory. */
async function doctor(env: { baseUrl: string; apiKey?: string; claudeBin?: string }, args: string[] = []) {
  const full = offlineClaudeEnv({ baseUrl: env.baseUrl, home: await tempHome("cadre-doctor-"), apiKey: env.apiKey ?? "" });
  if (env.apiKey === undefined) delete full.ANTHROPIC_API_KEY;
  if (env.claudeBin !== undefined) full.CADRE_CLAUDE_BIN = env.claudeBin;
  return execa("node", [bin, "doctor", ...args], { cwd: repo, env: full, extendEnv: false, reject: false, timeout: 30_000 });
}

const line = (stdout: string, name: string) => stdout.split("\n").find((text) => text.slice(2).startsWith(`${name} `));

describe("cadre doctor", () => {
  it("reports a missing login and an unreachable API in one screen, each with what to do, and exits 1", async () => {
    const port = await closedPort();
    const result = await doctor({ baseUrl: `http://127.0.0.1:${port}` });
    expect(result.exitCode, result.stderr).toBe(1);
    expect(result.stderr).toBe("");
    const lines = result.stdout.split("\n");
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(lines.every((text) => text.length <= 200)).toBe(true);
    expect(line(result.stdout, "node")).toMatch(/^✓ node +Node\.js \d+\.\d+\.\d+ \(cadre needs >=\d+/);
    // The claude a clone brings (inside the Agent SDK) is the version of the claude-code peer cadre pins.
    const pinned = manifest.peerDependencies["@anthropic-ai/claude-code"].replaceAll(".", "\\.");
    expect(line(result.stdout, "claude")).toMatch(new RegExp(`^✓ claude +${pinned} at .*claude(\\.exe)? \\(the version cadre is tested with\\)$`));
    expect(line(result.stdout, "login")).toBe(
      "✗ login   not logged in, and no ANTHROPIC_API_KEY; run claude auth login, or set ANTHROPIC_API_KEY (--rehearse needs neither)",
    );
    expect(line(result.stdout, "API")).toBe(`✗ API     cannot reach http://127.0.0.1:${port} (ECONNREFUSED); check ANTHROPIC_BASE_URL`);
    expect(line(result.stdout, "git")).toMatch(/^✓ git +\d+\.\d+\.\d+$/);
    expect(lines.at(-1)).toBe("cadre doctor: 2 things to fix (marked ✗)");
  });

  it("--offline checks everything but the network: no API request, a missing login is a note, exit 0", async () => {
    let asked = 0;
    const api = http.createServer((_request, response) => {
      asked++;
      response.end();
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => api.close(() => resolve())));
    const { port } = api.address() as { port: number };
    const result = await doctor({ baseUrl: `http://127.0.0.1:${port}` }, ["--offline"]);
    expect(result.exitCode, result.stdout).toBe(0);
    expect(line(result.stdout, "login")).toMatch(/^! login +not logged in/);
    expect(line(result.stdout, "API")).toBe("! API     not checked (--offline): it needs the network");
    expect(result.stdout.trim().split("\n").at(-1)).toBe("cadre doctor: ready for a first run offline (cadre run --rehearse)");
    expect(asked).toBe(0);
  });

  it("is ready with ANTHROPIC_API_KEY set and the API answering (the rehearsal server), and checks Redis when asked", async () => {
    const server = await createRehearsal();
    const port = await closedPort();
    const result = await doctor({ baseUrl: server.url, apiKey: "sk-doctor-test" }, ["--redis", `redis://127.0.0.1:${port}`]);
    expect(line(result.stdout, "login")).toBe("✓ login   ANTHROPIC_API_KEY");
    expect(line(result.stdout, "API")).toMatch(new RegExp(`^✓ API +${server.url} answers \\(\\d+ ms\\)$`));
    expect(line(result.stdout, "redis")).toBe(
      `✗ redis   cannot reach Redis at redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}; is redis-server running there?`,
    );
    expect(result.exitCode).toBe(1);

    const ready = await doctor({ baseUrl: server.url, apiKey: "sk-doctor-test" });
    expect(ready.stdout.split("\n").filter((text) => !text.startsWith("✓ "))).toEqual(["cadre doctor: ready for a first run"]);
    expect([ready.exitCode, ready.stderr]).toEqual([0, ""]);
  });

  it("says when the API refuses the key", async () => {
    const refusing = http.createServer((_, response) => response.writeHead(401).end('{"type":"error"}'));
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => refusing.close(() => resolve())));
    const url = `http://127.0.0.1:${(refusing.address() as { port: number }).port}`;
    const result = await doctor({ baseUrl: url, apiKey: "sk-wrong" });
    expect(line(result.stdout, "API")).toBe(`✗ API     ${url} refused ANTHROPIC_API_KEY (HTTP 401); check the key`);
    expect(result.exitCode).toBe(1);
  });

  it("names a claude it cannot run, and leaves the login unchecked rather than guessed", async () => {
    const server = await createRehearsal();
    const result = await doctor({ baseUrl: server.url, apiKey: "sk-doctor-test", claudeBin: join(repo, "no-such-claude") });
    expect(line(result.stdout, "claude")).toMatch(new RegExp(`^✗ claude +.*${join(repo, "no-such-claude")}.*CADRE_CLAUDE_BIN`));
    expect(line(result.stdout, "login")).toBe("! login   not checked: it needs the claude CLI");
    expect(result.stdout.split("\n").at(-1)).toBe("cadre doctor: 1 thing to fix (marked ✗)");
    expect(result.exitCode).toBe(1);
  });
});
