// What `cadre mcp --http` refuses before the MCP transport sees a request: a missing or
// wrong token, a Host or Origin it was not told to serve (DNS rebinding, cross-site
// pages), a body too large or not JSON, a client over the --max-clients cap.
import { describe, expect, it } from "vitest";
import { HostPolicy } from "../../src/util/allowed-hosts.ts";
import { raw, startHttpCadre } from "../support/mcp-http.ts";

const TOKEN = "test-token-0123456789abcdef";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const SCRIPTS = { unused: [{ text: "x" }] };

describe("cadre mcp --http refuses", () => {
  it("a missing or wrong token, a foreign Host or Origin, a body too large or not JSON; the Bearer scheme in any letter case passes", async () => {
    const { url } = await startHttpCadre(SCRIPTS, ["--token", TOKEN]);
    expect((await raw(url, {})).status).toBe(401);
    expect((await raw(url, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status).toBe(401);
    expect((await raw(url, { headers: { authorization: TOKEN } })).status).toBe(401);
    for (const scheme of ["bearer", "BEARER", "bEaReR"]) {
      expect((await raw(url, { headers: { authorization: `${scheme} ${TOKEN}` } })).status, scheme).toBe(200);
    }
    expect((await raw(url, { headers: { ...AUTH, host: `evil.example:${url.port}` } })).status).toBe(403);
    expect((await raw(url, { headers: { ...AUTH, host: `0.0.0.0:${url.port}` } })).status).toBe(403);
    expect((await raw(url, { headers: { ...AUTH, origin: "http://evil.example" } })).status).toBe(403);
    expect((await raw(url, { headers: { ...AUTH, origin: `http://localhost:${url.port}` } })).status).toBe(200);
    expect((await raw(url, { headers: AUTH, body: Buffer.alloc(2 * 1024 * 1024, " ") })).status).toBe(413);
    const notJson = await raw(url, { headers: AUTH, body: "{ not json" });
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body).error.code).toBe(-32700);
  });

  it("hosts beyond loopback unless --allowed-hosts names them, and says at start-up what it allows", async () => {
    const served = await startHttpCadre(SCRIPTS, ["--token", TOKEN, "--allowed-hosts", "cadre.example,Proxy.Example:443"]);
    const { url } = served;
    const port = url.port;
    expect(served.stderr()).toContain(
      `cadre mcp: allowed hosts (Host and Origin): localhost:${port}, 127.0.0.1:${port}, [::1]:${port}, cadre.example (any port), proxy.example:443`,
    );
    const status = async (headers: Record<string, string>) => (await raw(url, { headers: { ...AUTH, ...headers } })).status;
    expect(await status({ host: "cadre.example" })).toBe(200);
    expect(await status({ host: "CADRE.example:8443" })).toBe(200);
    expect(await status({ host: "proxy.example:443" })).toBe(200);
    expect(await status({ host: "proxy.example" })).toBe(403);
    expect(await status({ host: "evil.example" })).toBe(403);
    expect(await status({ origin: "https://cadre.example" })).toBe(200);
    expect(await status({ origin: "http://evil.example" })).toBe(403);
  });

  it("a client over --max-clients with 503 and Retry-After, until another client leaves", async () => {
    const { url } = await startHttpCadre(SCRIPTS, ["--token", TOKEN, "--max-clients", "2"]);
    const first = await raw(url, { headers: AUTH });
    expect(first.status).toBe(200);
    expect((await raw(url, { headers: AUTH })).status).toBe(200);
    const refused = await raw(url, { headers: AUTH });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body).error.message).toMatch(/2 clients/);
    // A client already in keeps being served.
    const sessionId = first.headers["mcp-session-id"] as string;
    const ping = await raw(url, {
      headers: { ...AUTH, "mcp-session-id": sessionId },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
    });
    expect(ping.status).toBe(200);
    expect((await raw(url, { method: "DELETE", headers: { ...AUTH, "mcp-session-id": sessionId }, body: "" })).status).toBe(200);
    expect((await raw(url, { headers: AUTH })).status).toBe(200);
  });
});

describe("the Host and Origin policy", () => {
  it("keeps the checks on a wildcard address: loopback names at the bound port and --allowed-hosts, nothing else", () => {
    for (const bound of ["0.0.0.0", "::"]) {
      const policy = new HostPolicy({ bound, port: 8787, allowedHosts: ["cadre.example", "proxy.example:443"] });
      for (const host of [
        "localhost:8787",
        "LOCALHOST:8787",
        "127.0.0.1:8787",
        "[::1]:8787",
        "cadre.example",
        "cadre.example:1234",
        "proxy.example:443",
      ]) {
        expect(policy.allows(host), `${bound}: ${host}`).toBe(true);
      }
      for (const host of [
        "0.0.0.0:8787",
        "[::]:8787",
        "192.168.1.20:8787",
        "evil.example:8787",
        "localhost:9999",
        "proxy.example",
        "proxy.example:80",
        "",
      ]) {
        expect(policy.allows(host), `${bound}: ${host}`).toBe(false);
      }
    }
  });

  it("allows a specific address it is bound to, at its port", () => {
    const policy = new HostPolicy({ bound: "10.1.2.3", port: 8787, allowedHosts: [] });
    expect(policy.allows("10.1.2.3:8787")).toBe(true);
    expect(policy.allows("10.1.2.3:8788")).toBe(false);
    expect(policy.allows("10.1.2.4:8787")).toBe(false);
    expect(policy.describe()).toBe("localhost:8787, 127.0.0.1:8787, [::1]:8787, 10.1.2.3:8787");
  });
});
