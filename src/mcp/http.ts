// `cadre mcp --http`: Streamable HTTP, one MCP session per client, with Host, Origin, token, size and client limits.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { bracketed } from "../util/allowed-hosts.ts";
import { HostCheck, isLoopback, TokenCheck } from "../util/http-guard.ts";
import { BodyTooLargeError, readBody } from "../util/read-body.ts";
import { McpServeError } from "./errors.ts";
import { HttpSessions } from "./http-sessions.ts";
import type { McpRuntime } from "./runtime.ts";

/**
 * Streamable HTTP for `cadre mcp --http`: one MCP session per client, each
 * with its own children. Every request is checked before the MCP transport
 * sees it: the Host and Origin headers (against DNS rebinding, see
 * src/util/allowed-hosts.ts), a bearer token, a request-body size limit, and a
 * cap on live clients. Other paths go to `page` (the dashboard), after the
 * same Host and Origin checks.
 */

/** Serves the paths other than /mcp; `authorized` says whether the request carries the token (header or ?token=). */
export type PageHandler = (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => Promise<void>;

export interface HttpOptions {
  host: string;
  /** 0: an ephemeral port. */
  port: number;
  /** Required beyond loopback; generated when absent. */
  token?: string;
  /** Names beyond loopback that Host and Origin may carry: "name" (any port) or "name:port". */
  allowedHosts?: readonly string[];
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Live MCP sessions (clients) at once; one more is refused with 503. Default 64. */
  maxClients?: number;
  /**
   * An MCP session whose client sent nothing for this long and that has no
   * live children is closed (clients that vanish without a DELETE). Default:
   * the registry's idle timeout; 0 keeps sessions until DELETE or shutdown.
   */
  sessionIdleMs?: number;
  /** What answers the other paths (the dashboard at /); without it they get 404. */
  page?: PageHandler;
}

export interface HttpServing {
  /** The MCP endpoint. */
  url: string;
  /** The server's root, where `page` answers. */
  origin: string;
  token: string;
  /** True when the token was generated here (the caller shows it once). */
  tokenGenerated: boolean;
  /** The Host and Origin values answered, for the start-up message. */
  allowedHosts: string;
  close(): Promise<void>;
}

export const MCP_PATH = "/mcp";
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_MAX_CLIENTS = 64;
/** What a client over the cap is told to wait: sessions end with a DELETE or after their idle time. */
const RETRY_AFTER_S = 10;

function sendError(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/** What answers a request: the checks it passes and the sessions it may reach. */
interface Serving {
  /** Known once the port is (it may be ephemeral). */
  hosts: HostCheck | undefined;
  tokens: TokenCheck;
  sessions: HttpSessions;
  page: PageHandler | undefined;
  maxBody: number;
  maxClients: number;
}

export async function serveHttp(runtime: McpRuntime, options: HttpOptions): Promise<HttpServing> {
  if (!isLoopback(options.host) && !options.token) {
    throw new McpServeError(
      `refusing to serve on ${options.host} without a token: anyone who can reach it could run claude on this machine. ` +
        `Give --token (or CADRE_MCP_TOKEN), or bind to 127.0.0.1.`,
    );
  }
  const tokens = new TokenCheck(options.token);
  const serving: Serving = {
    hosts: undefined,
    tokens,
    sessions: new HttpSessions(runtime, options.sessionIdleMs ?? runtime.registry.idleTimeoutMs),
    page: options.page,
    maxBody: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxClients: options.maxClients ?? DEFAULT_MAX_CLIENTS,
  };
  const httpServer = http.createServer((req, res) => {
    handle(req, res, serving).catch((error: unknown) => sendError(res, 500, `cadre mcp: ${(error as Error).message}`));
  });
  await listen(httpServer, options);
  const { port } = httpServer.address() as AddressInfo;
  const hosts = new HostCheck({ bound: options.host, port, allowedHosts: options.allowedHosts ?? [] });
  serving.hosts = hosts;
  const origin = `http://${bracketed(options.host)}:${port}`;

  return {
    url: `${origin}${MCP_PATH}`,
    origin,
    token: tokens.token,
    tokenGenerated: tokens.generated,
    allowedHosts: hosts.policy.describe(),
    close: async () => {
      await serving.sessions.close();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}

function listen(httpServer: http.Server, { host, port }: HttpOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    httpServer.once("error", (error) => reject(new McpServeError(`cannot listen on ${host}:${port}: ${error.message}`, { cause: error })));
    httpServer.listen(port, host, () => resolve());
  });
}

/** Host and Origin first, for every path; then the page, or the token and the MCP endpoint. */
async function handle(req: http.IncomingMessage, res: http.ServerResponse, serving: Serving): Promise<void> {
  const refusal = serving.hosts ? serving.hosts.refusal(req) : "the server is starting";
  if (refusal !== undefined) return sendError(res, 403, `${refusal} (see --allowed-hosts)`);
  const isMcp = new URL(req.url ?? "/", "http://x").pathname === MCP_PATH;
  if (!isMcp && serving.page) return serving.page(req, res, serving.tokens.accepts(req, { query: true }));
  if (!serving.tokens.accepts(req)) return sendError(res, 401, "a bearer token is required", { "www-authenticate": 'Bearer realm="cadre"' });
  if (!isMcp) return sendError(res, 404, `the MCP endpoint is ${MCP_PATH}`);
  const read = req.method === "POST" ? await readJson(req, res, serving.maxBody) : { body: undefined };
  if (read !== undefined) await toSession(req, res, read.body, serving);
}

/** A POST's JSON body; undefined when the request was answered with an error instead (too large, not JSON). */
async function readJson(req: http.IncomingMessage, res: http.ServerResponse, maxBody: number): Promise<{ body: unknown } | undefined> {
  let raw: Buffer;
  try {
    raw = await readBody(req, maxBody);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return void sendError(res, 413, `request body exceeds ${maxBody} bytes`, { connection: "close" });
    throw error;
  }
  try {
    return { body: JSON.parse(raw.toString("utf8")) };
  } catch {
    res.writeHead(400, { "content-type": "application/json" });
    return void res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
  }
}

/** The request to its client's session, or, an initialize, to a new session while there is room for one more client. */
async function toSession(req: http.IncomingMessage, res: http.ServerResponse, body: unknown, serving: Serving): Promise<void> {
  const sessionId = req.headers["mcp-session-id"];
  if (typeof sessionId === "string") {
    const transport = serving.sessions.touch(sessionId);
    if (!transport) return sendError(res, 404, "unknown or expired MCP session; initialize again");
    return transport.handleRequest(req, res, body);
  }
  if (req.method !== "POST" || !isInitializeRequest(body)) return sendError(res, 400, "no MCP session: send initialize first");
  if (serving.sessions.size >= serving.maxClients) {
    return sendError(res, 503, `already ${serving.maxClients} clients, the most this server takes (--max-clients); retry later`, {
      "retry-after": String(RETRY_AFTER_S),
    });
  }
  const transport = await serving.sessions.open();
  await transport.handleRequest(req, res, body);
}
