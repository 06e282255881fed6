// In-process MCP servers of a worker, reached by the CLI through mcp_message control requests.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { McpMessageResponse } from "../protocol/index.ts";

type JsonRpcId = string | number;

/** What a notification from the CLI is acknowledged with: the control protocol still wants an answer. */
const NOTIFICATION_ACK = { jsonrpc: "2.0", result: {}, id: 0 } as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * An MCP Transport whose other end is the claude CLI's `mcp_message` control
 * requests: a request from the CLI is handed to the server, and the server's
 * response to that id becomes the control response. Server-initiated messages
 * (progress, logging) have no way back over this channel and are dropped.
 */
export class ControlChannelMcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #waiting = new Map<JsonRpcId, (response: JSONRPCMessage) => void>();
  #closed = false;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message) && "id" in message && message.id !== undefined && message.id !== null) {
      const deliver = this.#waiting.get(message.id);
      if (deliver) {
        this.#waiting.delete(message.id);
        deliver(message);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const [id, deliver] of this.#waiting) {
      deliver({ jsonrpc: "2.0", id, error: { code: -32000, message: "the in-process MCP server was closed" } });
    }
    this.#waiting.clear();
    this.onclose?.();
  }

  /** Hands one JSON-RPC message from the CLI to the server; resolves with what goes back as `mcp_response`. */
  async handle(message: unknown, signal: AbortSignal): Promise<JSONRPCMessage> {
    if (this.#closed) throw new Error("the in-process MCP server is closed");
    if (!isRecord(message) || typeof message.method !== "string") {
      throw new Error("mcp_message did not carry a JSON-RPC request or notification");
    }
    const id = message.id;
    if (id === undefined || id === null) {
      this.onmessage?.(message as JSONRPCMessage);
      return NOTIFICATION_ACK;
    }
    if (typeof id !== "string" && typeof id !== "number") throw new Error("mcp_message has an invalid JSON-RPC id");
    const response = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.#waiting.set(id, resolve);
      signal.addEventListener(
        "abort",
        () => {
          this.#waiting.delete(id);
          // Tell the server its request is void, as an MCP client would.
          this.onmessage?.({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } } as JSONRPCMessage);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    this.onmessage?.(message as JSONRPCMessage);
    return await response;
  }
}

/** In-process MCP servers of one worker, by the name the CLI knows them under. */
export class McpBridge {
  readonly #transports = new Map<string, ControlChannelMcpTransport>();

  private constructor() {}

  static async connect(servers: Record<string, McpServer>): Promise<McpBridge> {
    const bridge = new McpBridge();
    for (const [name, server] of Object.entries(servers)) {
      const transport = new ControlChannelMcpTransport();
      await server.connect(transport);
      bridge.#transports.set(name, transport);
    }
    return bridge;
  }

  get names(): string[] {
    return [...this.#transports.keys()];
  }

  async handle(serverName: string, message: unknown, signal: AbortSignal): Promise<McpMessageResponse> {
    const transport = this.#transports.get(serverName);
    if (!transport) {
      throw new Error(`no in-process MCP server named "${serverName}" (this worker has: ${this.names.join(", ") || "none"})`);
    }
    return { mcp_response: await transport.handle(message, signal) };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#transports.values()].map((t) => t.close()));
  }
}
