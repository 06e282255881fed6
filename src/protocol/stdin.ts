/**
 * Messages a host writes to the CLI's stdin, and small builders for them.
 */
import { z } from "zod";
import { type ContentBlockParam, ContentBlockParamSchema } from "./content.ts";
import {
  ControlCancelRequestMessageSchema,
  type ControlResponseMessage,
  ControlResponseMessageSchema,
  type InboundControlRequest,
  type OutboundControlRequest,
  type OutboundControlRequestMessage,
  OutboundControlRequestMessageSchema,
} from "./control.ts";
import type { ControlAnswer } from "./control-responses.ts";
import { KeepAliveMessageSchema } from "./messages.ts";

/** A prompt. The first one after initialize starts the session; each later one starts a turn. */
export const UserInputMessageSchema = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(ContentBlockParamSchema)]),
  }),
  /** The CLI ignores it on input; the SDK sends "". */
  session_id: z.string().optional(),
  parent_tool_use_id: z.string().nullable().optional(),
  /** Client id, echoed back on the replay (--replay-user-messages) and on the answering messages. */
  uuid: z.string().optional(),
  /** The text as written: no `@path` file mention is read and no leading `/` runs a command (the SDK's verbatimPrompts). */
  client_composed: z.literal(true).optional(),
});
export type UserInputMessage = z.infer<typeof UserInputMessageSchema>;

export const StdinMessageSchema = z.discriminatedUnion("type", [
  UserInputMessageSchema,
  OutboundControlRequestMessageSchema,
  ControlResponseMessageSchema,
  ControlCancelRequestMessageSchema,
  KeepAliveMessageSchema,
]);
export type StdinMessage = z.infer<typeof StdinMessageSchema>;

/**
 * A user message; a string becomes one text block. `uuid` names it for
 * rewind_files and --resume-session-at; `verbatim` sends it as text only
 * (client_composed: no file mention, no slash command).
 */
export function userMessage(content: string | ContentBlockParam[], uuid?: string, options: { verbatim?: boolean } = {}): UserInputMessage {
  return {
    type: "user",
    session_id: "",
    message: { role: "user", content: typeof content === "string" ? [{ type: "text", text: content }] : content },
    parent_tool_use_id: null,
    ...(uuid !== undefined && { uuid }),
    ...(options.verbatim === true && { client_composed: true }),
  };
}

export function controlRequest(requestId: string, payload: OutboundControlRequest): OutboundControlRequestMessage {
  return { type: "control_request", request_id: requestId, request: payload };
}

/**
 * Answers a CLI request: a PermissionResult for can_use_tool, a HookOutput for
 * hook_callback, an McpMessageResponse for mcp_message (see CONTROL_ANSWER_SCHEMAS).
 */
export function controlSuccess(requestId: string, payload: ControlAnswer<InboundControlRequest["subtype"]>): ControlResponseMessage {
  return { type: "control_response", response: { subtype: "success", request_id: requestId, response: payload } };
}

export function controlError(requestId: string, message: string): ControlResponseMessage {
  return { type: "control_response", response: { subtype: "error", request_id: requestId, error: message } };
}
