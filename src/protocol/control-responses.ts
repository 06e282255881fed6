/**
 * Payloads (`response.response`) of successful control responses. The CLI's answers
 * to host requests are parsed with these by whoever sent the request (the envelope
 * itself is ControlResponseMessageSchema); CONTROL_ANSWER_SCHEMAS says what the host
 * answers each CLI request with.
 */
import { z } from "zod";
import { type InboundControlRequest, JsonRpcMessageSchema, McpServerConfigSchema } from "./control.ts";
import { HookOutputSchema } from "./hooks.ts";
import { PermissionResultSchema } from "./permissions.ts";

export const SlashCommandSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  argumentHint: z.string().optional(),
  aliases: z.array(z.string()).optional(),
  builtin: z.boolean().optional(),
});
export type SlashCommand = z.infer<typeof SlashCommandSchema>;

export const ModelInfoSchema = z.looseObject({
  value: z.string(),
  displayName: z.string(),
  description: z.string(),
  resolvedModel: z.string().optional(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/** Answer to `initialize`: what this CLI offers. */
export const InitializeResponseSchema = z.looseObject({
  commands: z.array(SlashCommandSchema),
  /** Built-in and `initialize.agents` subagents. */
  agents: z.array(z.looseObject({ name: z.string(), description: z.string(), model: z.string().optional() })).optional(),
  output_style: z.string(),
  available_output_styles: z.array(z.string()),
  models: z.array(ModelInfoSchema),
  account: z.looseObject({
    email: z.string().optional(),
    organization: z.string().optional(),
    subscriptionType: z.string().optional(),
    tokenSource: z.string().optional(),
    apiKeySource: z.string().optional(),
    apiProvider: z.string().optional(),
  }),
  pid: z.number().optional(),
  claude_code_version: z.string().optional(),
  current_permission_mode: z.string().optional(),
  hooks_applied: z.boolean().optional(),
});
export type InitializeResponse = z.infer<typeof InitializeResponseSchema>;

export const McpServerStatusSchema = z.looseObject({
  name: z.string(),
  /** "connected" | "failed" | "needs-auth" | "pending" | "disabled". */
  status: z.string(),
  serverInfo: z.looseObject({ name: z.string(), version: z.string() }).optional(),
  error: z.string().optional(),
  config: McpServerConfigSchema.optional(),
  scope: z.string().optional(),
  source: z.string().optional(),
  tools: z.array(z.looseObject({ name: z.string(), description: z.string().optional() })).optional(),
});
export type McpServerStatus = z.infer<typeof McpServerStatusSchema>;

/** Answer to `mcp_status` (2.1.330 wraps the list in `mcpServers`). */
export const McpStatusResponseSchema = z.looseObject({
  mcpServers: z.array(McpServerStatusSchema),
});
export type McpStatusResponse = z.infer<typeof McpStatusResponseSchema>;

/** Answer to `mcp_set_servers`; errors maps a server name to its failure. */
export const McpSetServersResponseSchema = z.looseObject({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  errors: z.record(z.string(), z.string()),
});
export type McpSetServersResponse = z.infer<typeof McpSetServersResponseSchema>;

/** The host's answer to an `mcp_message` request. */
export const McpMessageResponseSchema = z.looseObject({
  mcp_response: JsonRpcMessageSchema,
});
export type McpMessageResponse = z.infer<typeof McpMessageResponseSchema>;

/** The host's answer to an `elicitation`: the user accepted (with the form's content), declined, or dismissed it. */
export const ElicitationAnswerSchema = z.looseObject({
  action: z.enum(["accept", "decline", "cancel"]),
  content: z.record(z.string(), z.unknown()).optional(),
});
export type ElicitationAnswer = z.infer<typeof ElicitationAnswerSchema>;

/** The host's answer to a `request_user_dialog`: the dialog's result (its shape is the kind's), or dismissed. */
export const UserDialogAnswerSchema = z.union([
  z.looseObject({ behavior: z.literal("cancelled") }),
  z.looseObject({ behavior: z.literal("completed"), result: z.unknown() }),
]);
export type UserDialogAnswer = z.infer<typeof UserDialogAnswerSchema>;

/** The success payload the host answers each CLI → host request with, by the request's subtype. */
export const CONTROL_ANSWER_SCHEMAS = {
  can_use_tool: PermissionResultSchema,
  hook_callback: HookOutputSchema,
  mcp_message: McpMessageResponseSchema,
  elicitation: ElicitationAnswerSchema,
  request_user_dialog: UserDialogAnswerSchema,
} as const satisfies Record<InboundControlRequest["subtype"], z.ZodType>;
export type ControlAnswer<S extends InboundControlRequest["subtype"]> = z.infer<(typeof CONTROL_ANSWER_SCHEMAS)[S]>;

/** Answer to `interrupt`: uuids of user messages still queued. */
export const InterruptResponseSchema = z.looseObject({
  still_queued: z.array(z.string()),
  cancelled: z.array(z.string()).optional(),
});
export type InterruptResponse = z.infer<typeof InterruptResponseSchema>;

export const SetModelResponseSchema = z.looseObject({ model: z.string() });
export type SetModelResponse = z.infer<typeof SetModelResponseSchema>;

/** Answer to `set_permission_mode`: the mode now in effect (absent from older CLIs). */
export const SetPermissionModeResponseSchema = z.looseObject({ mode: z.string().optional() });
export type SetPermissionModeResponse = z.infer<typeof SetPermissionModeResponseSchema>;

export const RewindFilesResponseSchema = z.looseObject({
  canRewind: z.boolean(),
  error: z.string().optional(),
  filesChanged: z.array(z.string()).optional(),
  insertions: z.number().optional(),
  deletions: z.number().optional(),
  /** Real rewinds only: files left alone because a link or non-regular file stood at their path. */
  skippedLinks: z.number().optional(),
});
export type RewindFilesResponse = z.infer<typeof RewindFilesResponseSchema>;

/** Answer to `get_context_usage`: the context window's use by category (system prompt, tools, messages, …). */
export const ContextUsageSchema = z.looseObject({
  categories: z.array(
    z.looseObject({
      /** Stable where the English name is not; absent from older CLIs. */
      id: z.string().optional(),
      name: z.string(),
      tokens: z.number(),
      /** "used", "free", "buffer" or "deferred". */
      kind: z.string().optional(),
    }),
  ),
  totalTokens: z.number(),
  maxTokens: z.number(),
  percentage: z.number(),
  model: z.string().optional(),
});
export type ContextUsage = z.infer<typeof ContextUsageSchema>;

/** Answer to `get_usage`: the plan and its rate limits, as the account's usage endpoint reports them. */
export const UsageResponseSchema = z.looseObject({
  subscription_type: z.string().nullable().optional(),
  rate_limits_available: z.boolean().optional(),
  rate_limits: z.unknown().optional(),
});
export type UsageResponse = z.infer<typeof UsageResponseSchema>;

/** Answer to `list_models`. */
export const ListModelsResponseSchema = z.looseObject({ models: z.array(ModelInfoSchema) });
export type ListModelsResponse = z.infer<typeof ListModelsResponseSchema>;

/** Answer to `list_permission_rules`: the rules in effect, by source and behaviour. */
export const PermissionRulesResponseSchema = z.looseObject({ state: z.record(z.string(), z.unknown()) });
export type PermissionRulesResponse = z.infer<typeof PermissionRulesResponseSchema>;

/** Answer to `get_settings`: the merged settings and where they came from. */
export const SettingsResponseSchema = z.record(z.string(), z.unknown());
export type SettingsResponse = z.infer<typeof SettingsResponseSchema>;

/** Answer to `reload_skills`. */
export const ReloadSkillsResponseSchema = z.looseObject({ skills: z.array(SlashCommandSchema) });
export type ReloadSkillsResponse = z.infer<typeof ReloadSkillsResponseSchema>;

/** Answer to `reload_plugins`: what the session has now. */
export const ReloadPluginsResponseSchema = z.looseObject({
  commands: z.array(SlashCommandSchema),
  mcpServers: z.array(McpServerStatusSchema).optional(),
  error_count: z.number().optional(),
});
export type ReloadPluginsResponse = z.infer<typeof ReloadPluginsResponseSchema>;

/** Answer to `mcp_call`: the tool's MCP result. */
export const McpCallResponseSchema = z.record(z.string(), z.unknown());
export type McpCallResponse = z.infer<typeof McpCallResponseSchema>;
