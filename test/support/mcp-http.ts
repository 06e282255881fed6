// `cadre mcp --http` as a child process, and raw HTTP requests whose headers can be anything.
import http from "node:http";
import { execa, type ResultPromise } from "execa";
import { onTestFinished } from "vitest";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { CADRE_BIN, scriptedWorkspace } from "./mcp.ts";
import { until } from "./wait.ts";

export const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

export interface Served {
  process: ResultPromise;
  url: URL;
  stderr: () => string;
}

/** `cadre mcp --http 127.0.0.1:0 --scripts … <args>`, ended after the test. */
export async function startHttpCadre(scripts: RehearsalScriptsInput, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const { home, cwd, tmp, scriptsFile } = await scriptedWorkspace(scripts);
  // No spare: these tests count the children of MCP sessions (test/mcp/warm.test.ts has the spares).
  const child = execa(process.execPath, [CADRE_BIN, "mcp", "--http", "127.0.0.1:0", "--scripts", scriptsFile, "--warm", "0", ...args], {
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

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw request (an initialize by default), so that Host and Origin can be anything (fetch would not allow it). */
export function raw(url: URL, options: { headers?: Record<string, string>; body?: string | Buffer; method?: string }): Promise<RawResponse> {
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
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body ?? JSON.stringify(INIT));
  });
}
