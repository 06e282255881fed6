// Answers the CLI's control requests: can_use_tool, hook_callback and mcp_message; an unknown one is refused.
import type {
  CanUseToolRequest,
  ControlRequestMessage,
  ElicitationAnswer,
  ElicitationRequest,
  PermissionResult,
  RequestUserDialogRequest,
  UserDialogAnswer,
} from "../protocol/index.ts";
import type { ControlChannel } from "./control-channel.ts";
import type { HookRegistry } from "./hooks.ts";
import type { McpBridge } from "./mcp-bridge.ts";
import type { WorkerOptions } from "./options.ts";
import { type PermissionRequest, permissionRequestFrom, permissionResponse, policyDecision } from "./permissions.ts";

export interface InboundContext {
  channel: ControlChannel;
  hooks: HookRegistry;
  mcp: McpBridge;
  options: Pick<
    WorkerOptions,
    "canUseTool" | "permissionPolicy" | "permissionTimeoutMs" | "onElicitation" | "elicitationPolicy" | "onUserDialog" | "supportedDialogKinds"
  >;
  /** The wait for a hook callback whose matcher names no limit. */
  hookTimeoutMs: number;
  /** The worker's session (for handlers that serve many workers). */
  sessionId(): string | undefined;
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
      case "elicitation":
        void channel.handleRequest(requestId, request.subtype, (signal) => this.#elicit(request, signal), {
          timeoutMs: options.permissionTimeoutMs,
        });
        return;
      case "request_user_dialog":
        void channel.handleRequest(requestId, request.subtype, (signal) => this.#dialog(request, signal), {
          timeoutMs: options.permissionTimeoutMs,
        });
        return;
    }
  }

  /** An MCP server asks the user: the handler answers, else the policy (by default a decline, which the server is told). */
  async #elicit(request: ElicitationRequest, signal: AbortSignal): Promise<ElicitationAnswer> {
    const { onElicitation, elicitationPolicy } = this.context.options;
    if (onElicitation) return onElicitation({ ...request, signal, sessionId: this.context.sessionId() });
    return elicitationPolicy ?? { action: "decline" };
  }

  /**
   * A dialog of a kind cadre declared goes to the handler. One it did not
   * declare gets an error, which the CLI discards (the protocol forbids
   * settling an undeclared dialog), and the dialog runs out at its deadline.
   */
  async #dialog(request: RequestUserDialogRequest, signal: AbortSignal): Promise<UserDialogAnswer> {
    const { onUserDialog, supportedDialogKinds = [] } = this.context.options;
    if (onUserDialog === undefined || !supportedDialogKinds.includes(request.dialog_kind))
      throw new Error(`cadre did not declare dialogs of kind "${request.dialog_kind}"`);
    return onUserDialog({ ...request, signal, sessionId: this.context.sessionId() });
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
