// `cadre mcp --http`: Streamable HTTP, one MCP session per client, with Host, Origin, token, size and client limits.
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { bracketed } from "../util/allowed-hosts.ts";
import { HostCheck, isLoopback, TokenCheck } from "../util/http-guard.ts";
import { BodyTooLargeError, readBody } from "../util/read-body.ts";
import { McpServeError } from "./errors.ts";
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

export async function serveHttp(runtime: McpRuntime, options: HttpOptions): Promise<HttpServing> {
  if (!isLoopback(options.host) && !options.token) {
    throw new McpServeError(
      `refusing to serve on ${options.host} without a token: anyone who can reach it could run claude on this machine. ` +
        `Give --token (or CADRE_MCP_TOKEN), or bind to 127.0.0.1.`,
    );
  }
  const tokens = new TokenCheck(options.token);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxClients = options.maxClients ?? DEFAULT_MAX_CLIENTS;
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; owner: string; lastSeen: number; close: () => Promise<void> }>();
  const sessionIdleMs = options.sessionIdleMs ?? runtime.registry.idleTimeoutMs;
  const sweep =
    sessionIdleMs > 0
      ? setInterval(
          () => {
            const cutoff = Date.now() - sessionIdleMs;
            for (const session of sessions.values()) {
              const liveChildren = runtime.registry.list(session.owner).some((child) => child.status !== "closed");
              if (session.lastSeen < cutoff && !liveChildren) void session.close();
            }
          },
          Math.min(60_000, Math.max(250, sessionIdleMs / 4)),
        )
      : undefined;
  sweep?.unref?.();
  // Known once the port is (it may be ephemeral).
  let hosts: HostCheck | undefined;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const refusal = hosts ? hosts.refusal(req) : "the server is starting";
    if (refusal !== undefined) return sendError(res, 403, `${refusal} (see --allowed-hosts)`);
    const isMcp = new URL(req.url ?? "/", "http://x").pathname === MCP_PATH;
    if (!isMcp && options.page) return options.page(req, res, tokens.accepts(req, { query: true }));
    if (!tokens.accepts(req)) return sendError(res, 401, "a bearer token is required", { "www-authenticate": 'Bearer realm="cadre"' });
    if (!isMcp) return sendError(res, 404, `the MCP endpoint is ${MCP_PATH}`);

    let body: unknown;
    if (req.method === "POST") {
      let raw: Buffer;
      try {
        raw = await readBody(req, maxBody);
      } catch (error) {
        if (error instanceof BodyTooLargeError) return sendError(res, 413, `request body exceeds ${maxBody} bytes`, { connection: "close" });
        throw error;
      }
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
      }
    }

    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) return sendError(res, 404, "unknown or expired MCP session; initialize again");
      session.lastSeen = Date.now();
      return session.transport.handleRequest(req, res, body);
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) return sendError(res, 400, "no MCP session: send initialize first");
    if (sessions.size >= maxClients) {
      return sendError(res, 503, `already ${maxClients} clients, the most this server takes (--max-clients); retry later`, {
        "retry-after": String(RETRY_AFTER_S),
      });
    }

    const id = randomUUID();
    const owner = `http:${id}`;
    const server = runtime.createServer(owner);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    let closed: Promise<void> | undefined;
    const close = () =>
      (closed ??= (async () => {
        sessions.delete(id);
        await runtime.registry.closeOwner(owner);
        await server.close().catch(() => {});
      })());
    // DELETE from the client, or the server shutting down: the client's children go with it.
    transport.onclose = () => void close();
    sessions.set(id, { transport, owner, lastSeen: Date.now(), close });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendError(res, 500, `cadre mcp: ${(error as Error).message}`));
  });
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", (error) =>
      reject(new McpServeError(`cannot listen on ${options.host}:${options.port}: ${error.message}`, { cause: error })),
    );
    httpServer.listen(options.port, options.host, () => resolve());
  });
  const { port } = httpServer.address() as AddressInfo;
  hosts = new HostCheck({ bound: options.host, port, allowedHosts: options.allowedHosts ?? [] });
  const origin = `http://${bracketed(options.host)}:${port}`;

  return {
    url: `${origin}${MCP_PATH}`,
    origin,
    token: tokens.token,
    tokenGenerated: tokens.generated,
    allowedHosts: hosts.policy.describe(),
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.close()));
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}
