// The MCP sessions of `cadre mcp --http`: one per client, each the owner of its children, closed on DELETE, shutdown or idleness.
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { McpRuntime } from "./runtime.ts";

interface HttpSession {
  transport: StreamableHTTPServerTransport;
  /** The registry's owner of the client's children. */
  owner: string;
  /** When its client last sent a request (epoch ms). */
  lastSeen: number;
  close: () => Promise<void>;
}

/**
 * One MCP session per client, each with its own MCP server and children. A
 * session whose client sent nothing for `idleMs` and that has no live
 * children is closed (clients that vanish without a DELETE); 0 keeps
 * sessions until DELETE or shutdown.
 */
export class HttpSessions {
  readonly #runtime: McpRuntime;
  readonly #sessions = new Map<string, HttpSession>();
  readonly #sweep: ReturnType<typeof setInterval> | undefined;

  constructor(runtime: McpRuntime, idleMs: number) {
    this.#runtime = runtime;
    if (idleMs > 0) {
      this.#sweep = setInterval(() => this.#closeIdle(idleMs), Math.min(60_000, Math.max(250, idleMs / 4)));
      this.#sweep.unref?.();
    }
  }

  /** Live sessions: clients. */
  get size(): number {
    return this.#sessions.size;
  }

  /** The transport of the session of that id, its client seen now; undefined for one unknown or expired. */
  touch(id: string): StreamableHTTPServerTransport | undefined {
    const session = this.#sessions.get(id);
    if (session) session.lastSeen = Date.now();
    return session?.transport;
  }

  /** A new session, for a client that sent initialize: its own MCP server, connected to the transport returned. */
  async open(): Promise<StreamableHTTPServerTransport> {
    const id = randomUUID();
    const owner = `http:${id}`;
    const server = this.#runtime.createServer(owner);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id });
    let closed: Promise<void> | undefined;
    const close = () =>
      (closed ??= (async () => {
        this.#sessions.delete(id);
        await this.#runtime.registry.closeOwner(owner);
        await server.close().catch(() => {});
      })());
    // DELETE from the client, or the server shutting down: the client's children go with it.
    transport.onclose = () => void close();
    this.#sessions.set(id, { transport, owner, lastSeen: Date.now(), close });
    await server.connect(transport);
    return transport;
  }

  /** Closes every session, and the children of each. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    await Promise.all([...this.#sessions.values()].map((s) => s.close()));
  }

  #closeIdle(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const session of this.#sessions.values()) {
      const liveChildren = this.#runtime.registry.list(session.owner).some((child) => child.status !== "closed");
      if (session.lastSeen < cutoff && !liveChildren) void session.close();
    }
  }
}
