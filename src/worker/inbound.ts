import type { CanUseToolRequest, ControlRequestMessage, PermissionResult } from "../protocol/index.ts";
import type { ControlChannel } from "./control-channel.ts";
import type { HookRegistry } from "./hooks.ts";
import type { McpBridge } from "./mcp-bridge.ts";
import type { WorkerOptions } from "./options.ts";
import { type PermissionRequest, permissionRequestFrom, permissionResponse, policyDecision } from "./permissions.ts";

export interface InboundContext {
  channel: ControlChannel;
  hooks: HookRegistry;
  mcp: McpBridge;
  options: Pick<WorkerOptions, "canUseTool" | "permissionPolicy" | "permissionTimeoutMs">;
  /** The wait for a hook callback whose matcher names no limit. */
  hookTimeoutMs: number;
  /** A permission request starts waiting on its handler (the worker shows it as a state). */
  onPermissionStart(requestId: string, request: Omit<PermissionRequest, "signal">): void;
  onPermissionEnd(requestId: string): void;
}

/**
 * The CLI's control requests to cadre: each goes to its handler (permission
 * handler or policy, hook callback, in-process MCP server) and is answered
 * through the control channel, with the limits of its kind.
 */
export class InboundRequests {
  constructor(private readonly context: InboundContext) {}

  route(message: ControlRequestMessage): void {
    const { channel, hooks, mcp, hookTimeoutMs, options } = this.context;
    const { request_id: requestId, request } = message;
    switch (request.subtype) {
      case "can_use_tool":
        void channel.handleRequest(requestId, request.subtype, (signal) => this.#decidePermission(requestId, request, signal), {
          timeoutMs: options.permissionTimeoutMs,
        });
        return;
      case "hook_callback":
        void channel.handleRequest(
          requestId,
          request.subtype,
          (signal) => hooks.invoke(request.callback_id, request.input, { toolUseId: request.tool_use_id, signal }),
          { timeoutMs: hooks.limitMs(request.callback_id) ?? hookTimeoutMs },
        );
        return;
      case "mcp_message":
        void channel.handleRequest(requestId, request.subtype, (signal) => mcp.handle(request.server_name, request.message, signal));
        return;
    }
  }

  async #decidePermission(requestId: string, raw: CanUseToolRequest, signal: AbortSignal): Promise<PermissionResult> {
    const { options } = this.context;
    const request = permissionRequestFrom(requestId, raw, signal);
    const { signal: _omit, ...visible } = request;
    this.context.onPermissionStart(requestId, visible);
    try {
      const handler = options.canUseTool;
      const decision = handler ? await handler(request) : policyDecision(options.permissionPolicy ?? "deny", request.toolName);
      return permissionResponse(decision, request);
    } finally {
      this.context.onPermissionEnd(requestId);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A control request of a kind cadre does not know still gets an answer: an error naming it. True when `raw` was one. */
export function refuseUnknownControlRequest(channel: ControlChannel, raw: unknown): boolean {
  if (!isRecord(raw) || raw.type !== "control_request" || typeof raw.request_id !== "string") return false;
  const subtype = isRecord(raw.request) ? String(raw.request.subtype) : "?";
  channel.refuse(raw.request_id, `cadre does not handle "${subtype}" control requests`);
  return true;
}
