/**
 * Permission shapes shared by both directions: the suggestions a `can_use_tool`
 * request offers, and the PermissionResult a host answers it with.
 */
import { z } from "zod";

export const PermissionModeSchema = z.enum(["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"]);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

export const PermissionBehaviorSchema = z.enum(["allow", "deny", "ask"]);
export type PermissionBehavior = z.infer<typeof PermissionBehaviorSchema>;

export const PermissionUpdateDestinationSchema = z.enum(["userSettings", "projectSettings", "localSettings", "session", "cliArg"]);
export type PermissionUpdateDestination = z.infer<typeof PermissionUpdateDestinationSchema>;

export const PermissionRuleValueSchema = z.looseObject({
  toolName: z.string(),
  ruleContent: z.string().optional(),
});
export type PermissionRuleValue = z.infer<typeof PermissionRuleValueSchema>;

function ruleUpdate<T extends string>(type: T) {
  return z.looseObject({
    type: z.literal(type),
    rules: z.array(PermissionRuleValueSchema),
    behavior: PermissionBehaviorSchema,
    destination: PermissionUpdateDestinationSchema,
  });
}
function directoryUpdate<T extends string>(type: T) {
  return z.looseObject({
    type: z.literal(type),
    directories: z.array(z.string()),
    destination: PermissionUpdateDestinationSchema,
  });
}

/** One change to the permission rules, e.g. "always allow `Bash(touch x *)` in localSettings". */
export const PermissionUpdateSchema = z.discriminatedUnion("type", [
  ruleUpdate("addRules"),
  ruleUpdate("replaceRules"),
  ruleUpdate("removeRules"),
  z.looseObject({
    type: z.literal("setMode"),
    mode: PermissionModeSchema,
    destination: PermissionUpdateDestinationSchema,
  }),
  directoryUpdate("addDirectories"),
  directoryUpdate("removeDirectories"),
]);
export type PermissionUpdate = z.infer<typeof PermissionUpdateSchema>;

/** How the host classifies its own decision (feeds the CLI's telemetry and tool_result_meta). */
const DecisionClassificationSchema = z.enum(["user_temporary", "user_permanent", "user_reject"]);

export const PermissionAllowSchema = z.looseObject({
  behavior: z.literal("allow"),
  /** The tool input to run with; the CLI expects it (send the request's `input` back when unchanged). */
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  updatedPermissions: z.array(PermissionUpdateSchema).optional(),
  toolUseID: z.string().optional(),
  decisionClassification: DecisionClassificationSchema.optional(),
});
export type PermissionAllow = z.infer<typeof PermissionAllowSchema>;

export const PermissionDenySchema = z.looseObject({
  behavior: z.literal("deny"),
  /** Shown to the model as the tool_result error text. */
  message: z.string(),
  /** Also end the turn. */
  interrupt: z.boolean().optional(),
  toolUseID: z.string().optional(),
  decisionClassification: DecisionClassificationSchema.optional(),
});
export type PermissionDeny = z.infer<typeof PermissionDenySchema>;

/** The success payload answering a `can_use_tool` control request. */
export const PermissionResultSchema = z.discriminatedUnion("behavior", [PermissionAllowSchema, PermissionDenySchema]);
export type PermissionResult = z.infer<typeof PermissionResultSchema>;
