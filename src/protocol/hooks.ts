/**
 * Hooks over the control protocol: the matchers a host registers in `initialize`,
 * the `input` a `hook_callback` request carries, and the HookOutput (Claude Code's
 * hook JSON output) the host answers it with.
 */
import { z } from "zod";
import { PermissionUpdateSchema } from "./permissions.ts";

export const HookEventSchema = z.enum([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
  /** A skill's `!command` shell line is about to run (tool_name Bash or PowerShell, tool_input.command): deny keeps it from running. */
  "PreSkillShellCommand",
]);
export type HookEvent = z.infer<typeof HookEventSchema>;

/** One matcher of `initialize.hooks[event]`: the CLI sends hook_callback with one of these ids. */
export const HookCallbackMatcherSchema = z.looseObject({
  /** Tool-name pattern for tool events ("Bash", "Edit|Write"); absent matches all. */
  matcher: z.string().optional(),
  hookCallbackIds: z.array(z.string()),
  /** Seconds. */
  timeout: z.number().optional(),
  /** What an error answer does: "continue" (default) or "block" the guarded action. */
  onFailure: z.enum(["continue", "block"]).optional(),
});
export type HookCallbackMatcher = z.infer<typeof HookCallbackMatcherSchema>;

/**
 * The `input` of a hook_callback: common fields plus per-event ones. `hook_event_name`
 * stays a string (new events appear often); the event-specific fields are optional.
 */
export const HookInputSchema = z.looseObject({
  hook_event_name: z.string(),
  session_id: z.string(),
  transcript_path: z.string(),
  cwd: z.string(),
  prompt_id: z.string().optional(),
  permission_mode: z.string().optional(),
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
  effort: z.looseObject({ level: z.string() }).optional(),
  // Tool events (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied).
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  tool_response: z.unknown().optional(),
  mcp_server: z.looseObject({ name: z.string(), source: z.string() }).optional(),
  permission_suggestions: z.array(PermissionUpdateSchema).optional(),
  // UserPromptSubmit, SessionStart/End, Stop, Notification, compaction.
  prompt: z.string().optional(),
  source: z.string().optional(),
  reason: z.string().optional(),
  stop_hook_active: z.boolean().optional(),
  message: z.string().optional(),
  trigger: z.string().optional(),
});
export type HookInput = z.infer<typeof HookInputSchema>;

const contextOnly = <T extends string>(event: T) => z.looseObject({ hookEventName: z.literal(event), additionalContext: z.string().optional() });

export const PreToolUseHookSpecificOutputSchema = z.looseObject({
  hookEventName: z.literal("PreToolUse"),
  /** "ask" falls through to the permission prompt (a can_use_tool request with decision_reason_type "hook"). */
  permissionDecision: z.enum(["allow", "deny", "ask", "defer"]).optional(),
  permissionDecisionReason: z.string().optional(),
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  additionalContext: z.string().optional(),
});

const KnownHookSpecificOutputSchema = z.discriminatedUnion("hookEventName", [
  PreToolUseHookSpecificOutputSchema,
  z.looseObject({
    hookEventName: z.literal("PostToolUse"),
    additionalContext: z.string().optional(),
    updatedMCPToolOutput: z.unknown().optional(),
    updatedToolOutput: z.unknown().optional(),
  }),
  contextOnly("PostToolUseFailure"),
  z.looseObject({
    hookEventName: z.literal("UserPromptSubmit"),
    additionalContext: z.string().optional(),
    sessionTitle: z.string().optional(),
  }),
  z.looseObject({
    hookEventName: z.literal("SessionStart"),
    additionalContext: z.string().optional(),
    initialUserMessage: z.string().optional(),
  }),
  contextOnly("Stop"),
  contextOnly("SubagentStart"),
  contextOnly("SubagentStop"),
  contextOnly("Notification"),
  z.looseObject({
    hookEventName: z.literal("PermissionRequest"),
    decision: z.discriminatedUnion("behavior", [
      z.looseObject({
        behavior: z.literal("allow"),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
        updatedPermissions: z.array(PermissionUpdateSchema).optional(),
      }),
      z.looseObject({
        behavior: z.literal("deny"),
        message: z.string().optional(),
        interrupt: z.boolean().optional(),
      }),
    ]),
  }),
  z.looseObject({ hookEventName: z.literal("PermissionDenied"), retry: z.boolean().optional() }),
]);
const KNOWN_HOOK_OUTPUT_EVENTS = new Set<string>(KnownHookSpecificOutputSchema.options.map((o) => o.shape.hookEventName.value));

/**
 * The event-specific part of a hook's answer: checked for the events above,
 * passed through for events added since (new ones appear often).
 */
export const HookSpecificOutputSchema = z.union([
  KnownHookSpecificOutputSchema,
  z.looseObject({
    hookEventName: z.string().refine((name) => !KNOWN_HOOK_OUTPUT_EVENTS.has(name), "does not match this event's output fields"),
  }),
]);
export type HookSpecificOutput = z.infer<typeof HookSpecificOutputSchema>;

/** Answer now. Every field is optional: `{}` means "no opinion, go on". */
export const SyncHookOutputSchema = z.looseObject({
  /** false stops the whole turn (with stopReason shown to the user). */
  continue: z.boolean().optional(),
  suppressOutput: z.boolean().optional(),
  stopReason: z.string().optional(),
  /** Older top-level decision ("block" + reason blocks the action). */
  decision: z.enum(["approve", "block"]).optional(),
  reason: z.string().optional(),
  systemMessage: z.string().optional(),
  hookSpecificOutput: HookSpecificOutputSchema.optional(),
});

/** Answer later: the CLI goes on without waiting. */
export const AsyncHookOutputSchema = z.looseObject({
  async: z.literal(true),
  asyncTimeout: z.number().optional(),
});

/** The success payload answering a `hook_callback` control request. */
export const HookOutputSchema = z.union([AsyncHookOutputSchema, SyncHookOutputSchema]);
export type HookOutput = z.infer<typeof HookOutputSchema>;
