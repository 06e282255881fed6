/**
 * Every message the claude CLI writes on stdout in stream-json mode, and CliMessage,
 * their union (see parse.ts for how a line becomes one).
 *
 * Confirmed on claude 2.1.330 (captures in test/fixtures/protocol/captured/):
 * - control_response to initialize: {commands, agents, output_style, available_output_styles,
 *   models, account, pid, claude_code_version, current_permission_mode, hooks_applied, …} plus
 *   pending_permission_requests/pending_user_dialog_requests on the success envelope.
 *   Other answers: set_permission_mode {mode}, set_model {model} (after validating the model
 *   with an API call), set_max_thinking_tokens no `response` at all, mcp_status {mcpServers: []},
 *   mcp_set_servers {added, removed, errors}, interrupt {still_queued}; an unknown subtype gets
 *   {subtype: "error", error, error_code: "unsupported_request"}.
 * - system/init: session_id, cwd, model, tools, mcp_servers [{name, status, source}],
 *   permissionMode, apiKeySource, claude_code_version, slash_commands, agents (names, including
 *   initialize.agents), skills, plugins, output_style, uuid and many more (capabilities, …).
 *   It comes after the first user message, not after initialize.
 * - system/status {status: "requesting" | "compacting" | null, permissionMode?, compact_result?},
 *   system/compact_boundary {compact_metadata: {trigger, pre_tokens, post_tokens, duration_ms}},
 *   system/api_retry {attempt, max_retries: 10, retry_delay_ms, error_status: 429, error: "rate_limit"},
 *   system/hook_started and hook_response (settings hooks, --include-hook-events),
 *   system/task_started, task_updated, task_notification, background_tasks_changed.
 * - assistant: one message per content block, message.stop_reason null; API errors arrive as a
 *   synthetic assistant message (model "<synthetic>", error, is_api_error_message, api_error_status).
 * - user: tool_result echoes with tool_use_result and tool_result_meta; with
 *   --replay-user-messages the host's own messages come back with isReplay; content may be a string.
 * - stream_event (with --include-partial-messages) carrying message_start … message_stop.
 * - result: keys in no fixed order; success (also with is_error true after an API error),
 *   error_max_turns and error_during_execution (with errors[]); result, usage, modelUsage,
 *   permission_denials, stop_reason, terminal_reason, api_error_status, num_turns, uuid.
 * - control_request can_use_tool / hook_callback / mcp_message, control_cancel_request.
 * Not seen on 2.1.330 here (shapes from the docs and sdk.d.ts): tool_progress, auth_status,
 * rate_limit_event, error, tool_use_summary, keep_alive, conversation_reset, prompt_suggestion.
 */
import { z } from "zod";
import { ApiMessageSchema, ApiUsageSchema, ContentBlockSchema } from "./content.ts";
import {
  type ControlCancelRequestMessage,
  ControlCancelRequestMessageSchema,
  type ControlRequestMessage,
  ControlRequestMessageSchema,
  type ControlResponseMessage,
  ControlResponseMessageSchema,
} from "./control.ts";
import { StreamEventSchema } from "./stream.ts";
import type { SystemMessage } from "./system.ts";

export const AssistantMessageSchema = z.looseObject({
  type: z.literal("assistant"),
  message: ApiMessageSchema,
  session_id: z.string().optional(),
  /** Set when a subagent started by that tool_use produced the message. */
  parent_tool_use_id: z.string().nullable().optional(),
  uuid: z.string().optional(),
  /** Set on synthetic API-error messages: "rate_limit" | "authentication_failed" | "unknown" | …. */
  error: z.string().optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

/** A user-role message the CLI emits: tool results, replays of the host's input, local command output. */
export const UserEchoMessageSchema = z.looseObject({
  type: z.literal("user"),
  message: z.looseObject({
    role: z.literal("user"),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
  }),
  session_id: z.string().optional(),
  parent_tool_use_id: z.string().nullable().optional(),
  uuid: z.string().optional(),
  /** An echo of a message the host sent (--replay-user-messages, or history on resume). */
  isReplay: z.boolean().optional(),
  isSynthetic: z.boolean().optional(),
  /** The tool's structured output; shape differs per tool (string for errors). */
  tool_use_result: z.unknown().optional(),
});
export type UserEchoMessage = z.infer<typeof UserEchoMessageSchema>;

export const StreamEventMessageSchema = z.looseObject({
  type: z.literal("stream_event"),
  event: StreamEventSchema,
  session_id: z.string().optional(),
  parent_tool_use_id: z.string().nullable().optional(),
  uuid: z.string().optional(),
});
export type StreamEventMessage = z.infer<typeof StreamEventMessageSchema>;

/** Per-model totals in result.modelUsage. */
export const ModelUsageSchema = z.looseObject({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cacheReadInputTokens: z.number().optional(),
  cacheCreationInputTokens: z.number().optional(),
  /** Of cacheCreationInputTokens, the writes that live an hour (priced at twice the input price, not 1.25 times). */
  cacheCreationEphemeral1hInputTokens: z.number().optional(),
  webSearchRequests: z.number().optional(),
  costUSD: z.number().optional(),
  contextWindow: z.number().optional(),
  maxOutputTokens: z.number().optional(),
});
export type ModelUsage = z.infer<typeof ModelUsageSchema>;

export const PermissionDenialSchema = z.looseObject({
  tool_name: z.string(),
  tool_use_id: z.string(),
  tool_input: z.record(z.string(), z.unknown()),
});
export type PermissionDenial = z.infer<typeof PermissionDenialSchema>;

/** Subtypes seen so far; any other string is still a result. */
export type KnownResultSubtype =
  | "success"
  | "error_during_execution"
  | "error_max_turns"
  | "error_max_budget_usd"
  | "error_max_structured_output_retries";

/**
 * The end of a turn. Any subtype ends it, and only `is_error` says whether it failed
 * ("success" comes with is_error true after an API error). Everything but the subtype
 * is optional so that no result is ever lost to validation.
 */
export const ResultMessageSchema = z.looseObject({
  type: z.literal("result"),
  subtype: z.string(),
  is_error: z.boolean().optional(),
  /** Final assistant text (success subtypes). */
  result: z.string().optional(),
  /** Error subtypes. */
  errors: z.array(z.string()).optional(),
  /** On the zeroed result a run writes before it exits on a known startup failure: its cause (bypass_root, temp_dir_unusable, …). */
  startup_failure_reason: z.string().optional(),
  num_turns: z.number().optional(),
  duration_ms: z.number().optional(),
  duration_api_ms: z.number().optional(),
  /** Running total for the process, not per turn. */
  total_cost_usd: z.number().optional(),
  usage: ApiUsageSchema.optional(),
  modelUsage: z.record(z.string(), ModelUsageSchema).optional(),
  permission_denials: z.array(PermissionDenialSchema).optional(),
  /** With initialize.jsonSchema / --json-schema. */
  structured_output: z.unknown().optional(),
  stop_reason: z.string().nullable().optional(),
  /** "completed" | "max_turns" | "api_error" | "aborted_tools" | …. */
  terminal_reason: z.string().optional(),
  api_error_status: z.number().nullable().optional(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
  /** Set on a turn the CLI started itself: kind "task-notification" with the runId of the background task it reports. */
  origin: z.looseObject({ kind: z.string(), runId: z.string().optional() }).optional(),
});
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

/** Heartbeat while a long tool runs. */
export const ToolProgressMessageSchema = z.looseObject({
  type: z.literal("tool_progress"),
  tool_use_id: z.string(),
  tool_name: z.string(),
  elapsed_time_seconds: z.number(),
  parent_tool_use_id: z.string().nullable().optional(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type ToolProgressMessage = z.infer<typeof ToolProgressMessageSchema>;

export const AuthStatusMessageSchema = z.looseObject({
  type: z.literal("auth_status"),
  isAuthenticating: z.boolean(),
  output: z.array(z.string()),
  error: z.string().nullable().optional(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type AuthStatusMessage = z.infer<typeof AuthStatusMessageSchema>;

/** Subscription (claude.ai login) rate-limit state; not sent for API keys. */
export const RateLimitEventMessageSchema = z.looseObject({
  type: z.literal("rate_limit_event"),
  rate_limit_info: z.looseObject({
    /** "allowed" | "allowed_warning" | "rejected". */
    status: z.string(),
    resetsAt: z.number().optional(),
    rateLimitType: z.string().optional(),
    utilization: z.number().optional(),
    isUsingOverage: z.boolean().optional(),
  }),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type RateLimitEventMessage = z.infer<typeof RateLimitEventMessageSchema>;

export const ErrorMessageSchema = z.looseObject({
  type: z.literal("error"),
  error: z.looseObject({ type: z.string(), message: z.string() }),
});
export type ErrorMessage = z.infer<typeof ErrorMessageSchema>;

export const ToolUseSummaryMessageSchema = z.looseObject({
  type: z.literal("tool_use_summary"),
  summary: z.string(),
  preceding_tool_use_ids: z.array(z.string()),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type ToolUseSummaryMessage = z.infer<typeof ToolUseSummaryMessageSchema>;

export const KeepAliveMessageSchema = z.looseObject({ type: z.literal("keep_alive") });
export type KeepAliveMessage = z.infer<typeof KeepAliveMessageSchema>;

/**
 * Where a prompt sent with a `uuid` stands: queued, started, completed (the
 * last after the turn's result). Measured on CLI 2.1.330; a prompt without a
 * uuid gets none.
 */
export const CommandLifecycleMessageSchema = z.looseObject({
  type: z.literal("command_lifecycle"),
  /** The uuid the prompt was sent with. */
  command_uuid: z.string(),
  state: z.string(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type CommandLifecycleMessage = z.infer<typeof CommandLifecycleMessageSchema>;

/** /clear and similar: the transcript starts over under a new id. */
export const ConversationResetMessageSchema = z.looseObject({
  type: z.literal("conversation_reset"),
  new_conversation_id: z.string(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type ConversationResetMessage = z.infer<typeof ConversationResetMessageSchema>;

export const PromptSuggestionMessageSchema = z.looseObject({
  type: z.literal("prompt_suggestion"),
  suggestion: z.string(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});
export type PromptSuggestionMessage = z.infer<typeof PromptSuggestionMessageSchema>;

/**
 * A line parseCliMessage could not match: an unknown `type` (or system / control_request
 * subtype), or a known one that failed validation. `raw` is the original value, untouched.
 */
export const UnknownMessageSchema = z.object({
  type: z.literal("unknown"),
  raw: z.unknown(),
  reason: z.enum(["unknown_type", "invalid"]),
  /** Validation issues, for "invalid". */
  issues: z.string().optional(),
});
export type UnknownMessage = z.infer<typeof UnknownMessageSchema>;

/** Top-level (non-system) message schemas keyed by `type` (parse.ts dispatches on it). */
export const CLI_MESSAGE_SCHEMAS = {
  assistant: AssistantMessageSchema,
  user: UserEchoMessageSchema,
  stream_event: StreamEventMessageSchema,
  result: ResultMessageSchema,
  tool_progress: ToolProgressMessageSchema,
  auth_status: AuthStatusMessageSchema,
  rate_limit_event: RateLimitEventMessageSchema,
  error: ErrorMessageSchema,
  tool_use_summary: ToolUseSummaryMessageSchema,
  keep_alive: KeepAliveMessageSchema,
  conversation_reset: ConversationResetMessageSchema,
  command_lifecycle: CommandLifecycleMessageSchema,
  prompt_suggestion: PromptSuggestionMessageSchema,
  control_request: ControlRequestMessageSchema,
  control_response: ControlResponseMessageSchema,
  control_cancel_request: ControlCancelRequestMessageSchema,
} as const;

/** Anything parseCliMessage returns; `switch (m.type)` narrows (and `m.subtype` for system). */
export type CliMessage =
  | SystemMessage
  | AssistantMessage
  | UserEchoMessage
  | StreamEventMessage
  | ResultMessage
  | ToolProgressMessage
  | AuthStatusMessage
  | RateLimitEventMessage
  | ErrorMessage
  | ToolUseSummaryMessage
  | KeepAliveMessage
  | ConversationResetMessage
  | CommandLifecycleMessage
  | PromptSuggestionMessage
  | ControlRequestMessage
  | ControlResponseMessage
  | ControlCancelRequestMessage
  | UnknownMessage;
