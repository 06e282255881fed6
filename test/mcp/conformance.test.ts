// The official MCP conformance suite (@modelcontextprotocol/conformance) against `cadre mcp --http`.
// The suite's client cannot send cadre's bearer token, so it talks to a loopback proxy that adds
// it (and the Host cadre answers); everything else reaches cadre as the suite sent it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { execa } from "execa";
import { describe, expect, it, onTestFinished } from "vitest";
import { CADRE_BIN } from "../support/mcp.ts";
import { startHttpCadre } from "../support/mcp-http.ts";

const REPO = join(CADRE_BIN, "..", "..");
const SUITE = join(REPO, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const NODE20_SHIM = join(REPO, "test", "fixtures", "conformance-on-node20.mjs");

/** A loopback proxy to `target` that adds the bearer token. */
async function tokenProxy(target: URL, token: string): Promise<URL> {
  const proxy = http.createServer((req, res) => {
    const upstream = http.request(
      target,
      { method: req.method, path: req.url, headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        proxy.closeAllConnections();
      }),
  );
  return new URL(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`);
}

describe("the MCP conformance suite", () => {
  it("logging-set-level passes against cadre mcp --http", async () => {
    const token = "conformance-token";
    const served = await startHttpCadre({ child: [{ text: "hi" }] }, ["--token", token]);
    const url = await tokenProxy(served.url, token);
    const run = await execa(process.execPath, ["--import", NODE20_SHIM, SUITE, "server", "--url", url.href, "--scenario", "logging-set-level"], {
      cwd: REPO,
      reject: false,
      timeout: 60_000,
    });
    const output = stripVTControlCharacters(`${run.stdout}\n${run.stderr}`);
    expect(run.exitCode, output).toBe(0);
    expect(output).toMatch(/\[logging-set-level\] SUCCESS/);
    expect(output).toMatch(/Passed: 1\/1, 0 failed/);
  });
});
