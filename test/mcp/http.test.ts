// `cadre mcp --http`: the checks in front of Streamable HTTP, and the tools behind them.
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa, type ResultPromise } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { isGone } from "../support/processes.ts";
import { CADRE_BIN, call, claudeDescendants, scriptedWorkspace, until } from "./support.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

interface Served {
  process: ResultPromise;
  url: URL;
  stderr: () => string;
}

async function startHttpCadre(scripts: RehearsalScriptsInput, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const { home, cwd, tmp, scriptsFile } = await scriptedWorkspace(scripts);
  const child = execa(process.execPath, [CADRE_BIN, "mcp", "--http", "127.0.0.1:0", "--scripts", scriptsFile, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp, ...env },
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    reject: false,
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  onTestFinished(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await child;
  });
  const url = await until(() => /listening on (\S+)/.exec(stderr)?.[1], 20_000);
  return { process: child, url: new URL(url), stderr: () => stderr };
}

/** A raw request, so that Host and Origin can be anything (fetch would not allow it). */
function raw(
  url: URL,
  options: { headers?: Record<string, string>; body?: string | Buffer; method?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...options.headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body ?? JSON.stringify(INIT));
  });
}

describe("cadre mcp --http", () => {
  it("refuses requests without the token, with a foreign Host or Origin, or too large; serves the tools with the token", async () => {
    const token = "test-token-0123456789abcdef";
    const served = await startHttpCadre({ solo: [{ text: "solo says {{prompt}}" }] }, [], { CADRE_MCP_TOKEN: token });
    const { url } = served;
    const auth = { authorization: `Bearer ${token}` };
    // A token the user gave is never shown.
    expect(served.stderr()).not.toContain(token);

    expect((await raw(url, {})).status).toBe(401);
    expect((await raw(url, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    expect((await raw(url, { headers: { ...auth, host: `evil.example:${url.port}` } })).status).toBe(403);
    expect((await raw(url, { headers: { ...auth, origin: "http://evil.example" } })).status).toBe(403);
    expect((await raw(url, { headers: { ...auth, origin: `http://localhost:${url.port}` } })).status).toBe(200);
    const big = Buffer.alloc(2 * 1024 * 1024, " ");
    expect((await raw(url, { headers: auth, body: big })).status).toBe(413);

    const client = new Client({ name: "cadre-http-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } });
    await client.connect(transport);
    const spawned = await call(client, "spawn_session", { prompt: "over http", name: "solo" });
    expect(spawned.structuredContent).toMatchObject({ status: "idle", result: "solo says over http" });
    const listed = await call(client, "list_sessions");
    expect(listed.structuredContent!.sessions).toHaveLength(1);

    // Another client sees none of the first one's sessions.
    const other = new Client({ name: "other", version: "1.0.0" });
    await other.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: auth } }));
    expect((await call(other, "list_sessions")).structuredContent!.sessions).toHaveLength(0);
    expect((await call(other, "get_session", { session_id: "solo" })).isError).toBe(true);
    await other.close();

    // Ending the MCP session closes its children.
    const pid = served.process.pid!;
    const children = await claudeDescendants(pid);
    expect(children).toHaveLength(1);
    await transport.terminateSession();
    await client.close();
    expect(await isGone(children[0]!, 10_000)).toBe(true);

    served.process.kill("SIGTERM");
    const result = await served.process;
    expect(result.exitCode).toBe(0);
  });

  it("generates and shows a token when none is given", async () => {
    const served = await startHttpCadre({ unused: [{ text: "x" }] }, []);
    const token = await until(() => /token: (\S+)/.exec(served.stderr())?.[1]);
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect((await raw(served.url, {})).status).toBe(401);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(served.url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    expect((await client.listTools()).tools.length).toBe(10);
    await client.close();
    served.process.kill("SIGINT");
    expect((await served.process).exitCode).toBe(0);
  });

  it("expires an MCP session whose client went away without a DELETE and left no children", async () => {
    const served = await startHttpCadre({ unused: [{ text: "x" }] }, ["--token", "t0k3n-for-expiry-test", "--idle-timeout-s", "1"]);
    const auth = { authorization: "Bearer t0k3n-for-expiry-test" };
    const init = await raw(served.url, { headers: auth, body: JSON.stringify(INIT) });
    expect(init.status).toBe(200);
    const sessionId = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        served.url,
        { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth } },
        (res) => {
          res.resume();
          const id = res.headers["mcp-session-id"];
          if (typeof id === "string") resolve(id);
          else reject(new Error("no mcp-session-id"));
        },
      );
      req.end(JSON.stringify(INIT));
    });
    const ping = () =>
      raw(served.url, { headers: { ...auth, "mcp-session-id": sessionId }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }) });
    expect((await ping()).status).toBe(200);
    // Silent for longer than the idle limit (1 s; swept every 250 ms): the session is gone.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const expired = await ping();
    expect(expired.status).toBe(404);
    expect(expired.body).toContain("unknown or expired MCP session");
    served.process.kill("SIGTERM");
    expect((await served.process).exitCode).toBe(0);
  });

  it("will not listen beyond loopback without a token", async () => {
    const result = await execa(process.execPath, [CADRE_BIN, "mcp", "--http", "0.0.0.0:0"], { reject: false });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/without --token/);
  });
});
