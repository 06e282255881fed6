// `cadre mcp --http`: the tools behind Streamable HTTP, one client's sessions apart from
// another's. (The checks in front of it: test/reliability/http.test.ts.)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { CADRE_BIN, call, claudeDescendants } from "../support/mcp.ts";
import { INIT, raw, startHttpCadre } from "../support/mcp-http.ts";
import { isGone } from "../support/processes.ts";
import { until } from "../support/wait.ts";

describe("cadre mcp --http", () => {
  it("serves the tools with the token (never shown when the user gave it); each client sees only its own sessions", async () => {
    const token = "test-token-0123456789abcdef";
    const served = await startHttpCadre({ solo: [{ text: "solo says {{prompt}}" }] }, [], { CADRE_MCP_TOKEN: token });
    const { url } = served;
    const auth = { authorization: `Bearer ${token}` };
    expect(served.stderr()).not.toContain(token);

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
    // The token lets the client in: it sees the tools (their list is checked over stdio).
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("spawn_session");
    await client.close();
    served.process.kill("SIGINT");
    expect((await served.process).exitCode).toBe(0);
  });

  it("expires an MCP session whose client went away without a DELETE and left no children", async () => {
    const served = await startHttpCadre({ unused: [{ text: "x" }] }, [
      "--token",
      "t0k3n-for-expiry-test",
      "--idle-timeout-s",
      "1",
      "--max-clients",
      "1",
    ]);
    const auth = { authorization: "Bearer t0k3n-for-expiry-test" };
    const initialize = () => raw(served.url, { headers: auth, body: JSON.stringify(INIT) });
    const init = await initialize();
    expect(init.status).toBe(200);
    const sessionId = init.headers["mcp-session-id"];
    expect(sessionId).toBeTypeOf("string");
    const ping = () =>
      raw(served.url, {
        headers: { ...auth, "mcp-session-id": sessionId as string },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
      });
    expect((await ping()).status).toBe(200);
    // Silent for longer than the idle limit (1 s; swept every 250 ms), it gives up its slot: the one client more that
    // --max-clients 1 turned away is let in. (A ping would count as the client's sign of life.)
    await until(async () => ((await initialize()).status === 200 ? true : undefined), 10_000, "a second client let in");
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
