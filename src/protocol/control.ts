/**
 * The control protocol: request/response pairs either side may start, matched by
 * `request_id`. CLI→host requests (can_use_tool, hook_callback, mcp_message) come
 * on stdout; host→CLI requests (initialize, interrupt, set_model, …) go on stdin.
 * Payload shapes for the answers live beside them (PermissionResult in
 * permissions.ts, HookOutput in hooks.ts, the rest in control-responses.ts).
 */
import { z } from "zod";
import { BackgroundTasksRequestSchema, GetTaskOutputRequestSchema, StopTaskRequestSchema } from "./background.ts";
import { HookCallbackMatcherSchema, HookEventSchema, HookInputSchema } from "./hooks.ts";
import { PermissionModeSchema, PermissionUpdateSchema } from "./permissions.ts";
import { EffortLevelSchema } from "./session-settings.ts";

/**
 * A JSON-RPC 2.0 message (request, notification or response). All fields optional:
 * cadre forwards these between the CLI and an MCP server, which validates them.
 */
export const JsonRpcMessageSchema = z.looseObject({
  jsonrpc: z.literal("2.0").optional(),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string().optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export type JsonRpcMessage = z.infer<typeof JsonRpcMessageSchema>;

// ---- CLI → host requests -------------------------------------------------------

/** Asks whether a tool may run. Answer with a PermissionResult. */
export const CanUseToolRequestSchema = z.looseObject({
  subtype: z.literal("can_use_tool"),
  tool_name: z.string(),
  input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string(),
  permission_suggestions: z.array(PermissionUpdateSchema).optional(),
  blocked_path: z.string().optional(),
  decision_reason: z.string().optional(),
  /** "rule" | "mode" | "hook" | "classifier" | "safetyCheck" | …; with "hook" also decision_reason_hook_event. */
  decision_reason_type: z.string().optional(),
  title: z.string().optional(),
  display_name: z.string().optional(),
  description: z.string().optional(),
  /** Set when a subagent asks. */
  agent_id: z.string().optional(),
  /** Set for MCP tools: {name: server name, source: "sdk" | "user" | …}. */
  mcp_server: z.looseObject({ name: z.string(), source: z.string() }).optional(),
});
export type CanUseToolRequest = z.infer<typeof CanUseToolRequestSchema>;

/** Runs a hook the host registered in `initialize`. Answer with a HookOutput. */
export const HookCallbackRequestSchema = z.looseObject({
  subtype: z.literal("hook_callback"),
  callback_id: z.string(),
  input: HookInputSchema,
  tool_use_id: z.string().optional(),
});
export type HookCallbackRequest = z.infer<typeof HookCallbackRequestSchema>;

/**
 * A JSON-RPC message for an SDK-hosted MCP server named in `initialize.sdkMcpServers`
 * (the same subtype also goes host→CLI for any configured server). Answer with
 * {mcp_response: <JSON-RPC response>}; a notification still needs an (empty) answer.
 */
export const McpMessageRequestSchema = z.looseObject({
  subtype: z.literal("mcp_message"),
  server_name: z.string(),
  message: JsonRpcMessageSchema,
});
export type McpMessageRequest = z.infer<typeof McpMessageRequestSchema>;

/** An MCP server asks the user for input (a form, or a URL to open). Answer with an ElicitationAnswer. */
export const ElicitationRequestSchema = z.looseObject({
  subtype: z.literal("elicitation"),
  mcp_server_name: z.string(),
  message: z.string(),
  mode: z.enum(["form", "url"]).optional(),
  url: z.string().optional(),
  elicitation_id: z.string().optional(),
  /** A JSON Schema of the form's fields. */
  requested_schema: z.record(z.string(), z.unknown()).optional(),
  title: z.string().optional(),
  display_name: z.string().optional(),
  description: z.string().optional(),
});
export type ElicitationRequest = z.infer<typeof ElicitationRequestSchema>;

/**
 * A tool asks the host to show a blocking dialog. The CLI sends only the
 * kinds named in `initialize.supportedDialogKinds`; {behavior: "cancelled"}
 * dismisses it (the CLI then does the dialog's default).
 */
export const RequestUserDialogRequestSchema = z.looseObject({
  subtype: z.literal("request_user_dialog"),
  dialog_kind: z.string(),
  payload: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().optional(),
});
export type RequestUserDialogRequest = z.infer<typeof RequestUserDialogRequestSchema>;

export const InboundControlRequestSchema = z.discriminatedUnion("subtype", [
  CanUseToolRequestSchema,
  HookCallbackRequestSchema,
  McpMessageRequestSchema,
  ElicitationRequestSchema,
  RequestUserDialogRequestSchema,
]);
export type InboundControlRequest = z.infer<typeof InboundControlRequestSchema>;

/** A control request from the CLI (stdout). */
export const ControlRequestMessageSchema = z.looseObject({
  type: z.literal("control_request"),
  request_id: z.string(),
  request: InboundControlRequestSchema,
});
export type ControlRequestMessage = z.infer<typeof ControlRequestMessageSchema>;

// ---- host → CLI requests -------------------------------------------------------

export const McpServerConfigSchema = z.union([
  z.looseObject({
    type: z.literal("stdio").optional(),
    command: z.string(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
  }),
  z.looseObject({ type: z.literal("sse"), url: z.string(), headers: z.record(z.string(), z.string()).optional() }),
  z.looseObject({ type: z.literal("http"), url: z.string(), headers: z.record(z.string(), z.string()).optional() }),
  z.looseObject({ type: z.literal("sdk"), name: z.string() }),
]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** A subagent the model may start with the Agent tool (Claude Code's subagent format). */
export const AgentDefinitionSchema = z.looseObject({
  description: z.string(),
  prompt: z.string(),
  tools: z.array(z.string()).optional(),
  disallowedTools: z.array(z.string()).optional(),
  /** "sonnet" | "opus" | "haiku" | "inherit" | a model id. */
  model: z.string().optional(),
  mcpServers: z.array(z.union([z.string(), z.record(z.string(), McpServerConfigSchema)])).optional(),
  skills: z.array(z.string()).optional(),
  initialPrompt: z.string().optional(),
  maxTurns: z.number().optional(),
  background: z.boolean().optional(),
  memory: z.enum(["user", "project", "local"]).optional(),
  effort: z.union([EffortLevelSchema, z.number()]).optional(),
  permissionMode: PermissionModeSchema.optional(),
});
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** First request on stdin: configures hooks, SDK MCP servers, prompts and agents. */
export const InitializeRequestSchema = z.looseObject({
  subtype: z.literal("initialize"),
  hooks: z.partialRecord(HookEventSchema, z.array(HookCallbackMatcherSchema)).optional(),
  /** Names of MCP servers the host serves itself over mcp_message requests. */
  sdkMcpServers: z.array(z.string()).optional(),
  /** Structured-output schema; the final answer lands in result.structured_output. */
  jsonSchema: z.record(z.string(), z.unknown()).optional(),
  systemPrompt: z.union([z.string(), z.array(z.string())]).optional(),
  appendSystemPrompt: z.string().optional(),
  agents: z.record(z.string(), AgentDefinitionSchema).optional(),
  mcpServers: z.record(z.string(), McpServerConfigSchema).optional(),
  plugins: z.array(z.looseObject({ type: z.literal("local"), path: z.string() })).optional(),
  skills: z.array(z.string()).optional(),
  title: z.string().optional(),
  planModeInstructions: z.string().optional(),
  toolAliases: z.record(z.string(), z.string()).optional(),
  excludeDynamicSections: z.boolean().optional(),
  promptSuggestions: z.boolean().optional(),
  agentProgressSummaries: z.boolean().optional(),
  forwardSubagentText: z.boolean().optional(),
  supportedDialogKinds: z.array(z.string()).optional(),
  /** The flag-settings layer, when `--initialize-fields settings` says it comes here (off the command line). */
  settings: z.record(z.string(), z.unknown()).optional(),
  systemPromptSnapshot: z.boolean().optional(),
});
export type InitializeRequest = z.infer<typeof InitializeRequestSchema>;

/** Ends the running turn; the CLI answers {still_queued: [...]} and then emits a result. */
export const InterruptRequestSchema = z.looseObject({
  subtype: z.literal("interrupt"),
  cancel_queued: z.boolean().optional(),
});
export type InterruptRequest = z.infer<typeof InterruptRequestSchema>;

/** Omitted, null or "default" resets to the session default. */
export const SetModelRequestSchema = z.looseObject({
  subtype: z.literal("set_model"),
  model: z.string().nullable().optional(),
});
export type SetModelRequest = z.infer<typeof SetModelRequestSchema>;

export const SetPermissionModeRequestSchema = z.looseObject({
  subtype: z.literal("set_permission_mode"),
  mode: PermissionModeSchema,
});
export type SetPermissionModeRequest = z.infer<typeof SetPermissionModeRequestSchema>;

/** null resets to the session default. */
export const SetMaxThinkingTokensRequestSchema = z.looseObject({
  subtype: z.literal("set_max_thinking_tokens"),
  max_thinking_tokens: z.number().nullable().optional(),
});
export type SetMaxThinkingTokensRequest = z.infer<typeof SetMaxThinkingTokensRequestSchema>;

export const McpStatusRequestSchema = z.looseObject({ subtype: z.literal("mcp_status") });
export type McpStatusRequest = z.infer<typeof McpStatusRequestSchema>;

/** Replaces the dynamically added MCP servers with this set. */
export const McpSetServersRequestSchema = z.looseObject({
  subtype: z.literal("mcp_set_servers"),
  servers: z.record(z.string(), McpServerConfigSchema),
});
export type McpSetServersRequest = z.infer<typeof McpSetServersRequestSchema>;

export const McpReconnectRequestSchema = z.looseObject({
  subtype: z.literal("mcp_reconnect"),
  serverName: z.string(),
});
export const McpToggleRequestSchema = z.looseObject({
  subtype: z.literal("mcp_toggle"),
  serverName: z.string(),
  enabled: z.boolean(),
});

/** Restores files to their state at a user message (needs file checkpointing). */
export const RewindFilesRequestSchema = z.looseObject({
  subtype: z.literal("rewind_files"),
  user_message_id: z.string(),
  dry_run: z.boolean().optional(),
});
export type RewindFilesRequest = z.infer<typeof RewindFilesRequestSchema>;

/**
 * Asks for the context window's use by category. "summary" answers from local
 * estimates; "full" (the CLI's default) counts each category with the API.
 */
export const GetContextUsageRequestSchema = z.looseObject({
  subtype: z.literal("get_context_usage"),
  detail: z.enum(["summary", "full"]).optional(),
});
export type GetContextUsageRequest = z.infer<typeof GetContextUsageRequestSchema>;

/** What the session has used against the account's limits (rate limits, plan). */
export const GetUsageRequestSchema = z.looseObject({ subtype: z.literal("get_usage"), skip_behaviors: z.boolean().optional() });
/** Calls a tool of one of the CLI's MCP servers directly, outside any turn (`tool`: mcp__server__tool). */
export const McpCallRequestSchema = z.looseObject({
  subtype: z.literal("mcp_call"),
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  timeout_ms: z.number().optional(),
  check_permissions: z.boolean().optional(),
});
/** Withdraws a queued user message (by its uuid) before it starts a turn. */
export const CancelAsyncMessageRequestSchema = z.looseObject({ subtype: z.literal("cancel_async_message"), message_uuid: z.string() });
/** Applies settings to the flag-settings layer of a running session. */
export const ApplyFlagSettingsRequestSchema = z.looseObject({
  subtype: z.literal("apply_flag_settings"),
  settings: z.record(z.string(), z.unknown()),
});
export const GetSettingsRequestSchema = z.looseObject({ subtype: z.literal("get_settings") });
export const ListPermissionRulesRequestSchema = z.looseObject({ subtype: z.literal("list_permission_rules") });
export const ListModelsRequestSchema = z.looseObject({ subtype: z.literal("list_models") });
export const RenameSessionRequestSchema = z.looseObject({ subtype: z.literal("rename_session"), title: z.string() });
export const ReloadPluginsRequestSchema = z.looseObject({ subtype: z.literal("reload_plugins"), refuse_if_busy: z.boolean().optional() });
export const ReloadSkillsRequestSchema = z.looseObject({ subtype: z.literal("reload_skills") });

export const OutboundControlRequestSchema = z.discriminatedUnion("subtype", [
  GetUsageRequestSchema,
  McpCallRequestSchema,
  CancelAsyncMessageRequestSchema,
  ApplyFlagSettingsRequestSchema,
  GetSettingsRequestSchema,
  ListPermissionRulesRequestSchema,
  ListModelsRequestSchema,
  RenameSessionRequestSchema,
  ReloadPluginsRequestSchema,
  ReloadSkillsRequestSchema,
  InitializeRequestSchema,
  InterruptRequestSchema,
  SetModelRequestSchema,
  SetPermissionModeRequestSchema,
  SetMaxThinkingTokensRequestSchema,
  McpStatusRequestSchema,
  McpSetServersRequestSchema,
  McpMessageRequestSchema,
  McpReconnectRequestSchema,
  McpToggleRequestSchema,
  RewindFilesRequestSchema,
  GetContextUsageRequestSchema,
  StopTaskRequestSchema,
  GetTaskOutputRequestSchema,
  BackgroundTasksRequestSchema,
]);
export type OutboundControlRequest = z.infer<typeof OutboundControlRequestSchema>;

/** A control request from the host (stdin). */
export const OutboundControlRequestMessageSchema = z.looseObject({
  type: z.literal("control_request"),
  request_id: z.string(),
  request: OutboundControlRequestSchema,
});
export type OutboundControlRequestMessage = z.infer<typeof OutboundControlRequestMessageSchema>;

// ---- envelopes used in both directions ----------------------------------------

export const ControlSuccessSchema = z.looseObject({
  subtype: z.literal("success"),
  request_id: z.string(),
  /** Absent for requests with nothing to report (set_max_thinking_tokens). */
  response: z.record(z.string(), z.unknown()).optional(),
  pending_permission_requests: z.array(ControlRequestMessageSchema).optional(),
  /** request_user_dialog requests still waiting for an answer. */
  pending_user_dialog_requests: z.array(ControlRequestMessageSchema).optional(),
  /** elicitation requests still waiting for an answer. */
  pending_elicitation_requests: z.array(ControlRequestMessageSchema).optional(),
});
export type ControlSuccess = z.infer<typeof ControlSuccessSchema>;

export const ControlErrorSchema = z.looseObject({
  subtype: z.literal("error"),
  request_id: z.string(),
  error: z.string(),
  /** The CLI's own code, e.g. "unsupported_request", "check_failed". */
  error_code: z.string().optional(),
  /** Permission requests still waiting for an answer: dispatch them. */
  pending_permission_requests: z.array(ControlRequestMessageSchema).optional(),
  pending_user_dialog_requests: z.array(ControlRequestMessageSchema).optional(),
  pending_elicitation_requests: z.array(ControlRequestMessageSchema).optional(),
});
export type ControlError = z.infer<typeof ControlErrorSchema>;

/** The single answer to a control_request, from whichever side received it. */
export const ControlResponseMessageSchema = z.looseObject({
  type: z.literal("control_response"),
  response: z.discriminatedUnion("subtype", [ControlSuccessSchema, ControlErrorSchema]),
});
export type ControlResponseMessage = z.infer<typeof ControlResponseMessageSchema>;

/** Withdraws a pending control request (the CLI sends it for can_use_tool on interrupt). */
export const ControlCancelRequestMessageSchema = z.looseObject({
  type: z.literal("control_cancel_request"),
  request_id: z.string(),
});
export type ControlCancelRequestMessage = z.infer<typeof ControlCancelRequestMessageSchema>;
