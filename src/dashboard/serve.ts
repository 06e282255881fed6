// Serves the dashboard on its own port: Host and Origin checked, a token for the data.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { bracketed } from "../util/allowed-hosts.ts";
import { HostCheck, isLoopback, TokenCheck } from "../util/http-guard.ts";
import { pageDir } from "./assets.ts";
import { DashboardError } from "./errors.ts";
import type { DashboardSource } from "./feed.ts";
import { dashboardHandler } from "./routes.ts";

export interface ServeDashboardOptions {
  /** Default 127.0.0.1; beyond loopback only with a token. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Generated when absent. */
  token?: string;
}

export interface DashboardServing {
  /** The address to print: the page, with the token in its fragment (never sent to the server, kept by the page). */
  url: string;
  origin: string;
  token: string;
  tokenGenerated: boolean;
  close(): Promise<void>;
}

/**
 * The page address that opens the dashboard at `origin`, to print: with the
 * token when cadre generated it, else with a placeholder (a token the user
 * gave is never shown; they add it themselves).
 */
export function dashboardUrl(origin: string, token: { token: string; generated: boolean }): string {
  return `${origin}/#token=${token.generated ? encodeURIComponent(token.token) : "<your token>"}`;
}

/**
 * Serves the dashboard on its own port (`cadre run --ui`, `cadre ui`), with
 * the checks of cadre's MCP endpoint: Host and Origin against DNS rebinding
 * and other sites' pages, and a token for the data.
 */
export async function serveDashboard(source: DashboardSource, options: ServeDashboardOptions = {}): Promise<DashboardServing> {
  const host = options.host ?? "127.0.0.1";
  if (!isLoopback(host) && options.token === undefined) {
    throw new DashboardError(
      "DASHBOARD_TOKEN_REQUIRED",
      `refusing to serve the dashboard on ${host} without a token: give --token, or bind to 127.0.0.1`,
    );
  }
  pageDir();
  const tokens = new TokenCheck(options.token);
  const handle = dashboardHandler(source);
  let hosts: HostCheck | undefined;
  const server = http.createServer((req, res) => {
    const refusal = hosts ? hosts.refusal(req) : "the server is starting";
    if (refusal !== undefined) return void res.writeHead(403, { "content-type": "text/plain; charset=utf-8" }).end(`${refusal}\n`);
    handle(req, res, tokens.accepts(req, { query: true })).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`cadre dashboard: ${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(new DashboardError("DASHBOARD_LISTEN", `cannot listen on ${host}:${options.port ?? 0}: ${error.message}`, { cause: error })),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  hosts = new HostCheck({ bound: host, port, allowedHosts: [] });
  const origin = `http://${bracketed(host)}:${port}`;
  return {
    url: dashboardUrl(origin, tokens),
    origin,
    token: tokens.token,
    tokenGenerated: tokens.generated,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
