/** Session settings the CLI takes at start (flags or `initialize`): effort, thinking, the settings layer. */
import { z } from "zod";

/** How much effort the model puts in (`--effort`); it reaches the API as `output_config.effort`. */
export const EffortLevelSchema = z.enum(["low", "medium", "high", "xhigh", "max"]);
export type EffortLevel = z.infer<typeof EffortLevelSchema>;

/** Thinking: adaptive (the model decides; the CLI's default), a fixed budget, or none. */
export const ThinkingConfigSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("adaptive"), display: z.enum(["summarized", "omitted"]).optional() }),
  z.strictObject({
    type: z.literal("enabled"),
    budgetTokens: z.int().positive().optional(),
    display: z.enum(["summarized", "omitted"]).optional(),
  }),
  z.strictObject({ type: z.literal("disabled") }),
]);
export type ThinkingConfig = z.infer<typeof ThinkingConfigSchema>;

/**
 * Claude Code settings (the shape of settings.json: permissions, env, hooks,
 * sandbox, …), applied as the "flag settings" layer. Its keys are the CLI's
 * and change with it, so they pass through unchecked.
 */
export const ClaudeSettingsSchema = z.record(z.string(), z.unknown());
export type ClaudeSettings = z.infer<typeof ClaudeSettingsSchema>;
