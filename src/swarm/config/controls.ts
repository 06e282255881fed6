// The CLI's session controls a swarm file may set on defaults, an agent or a task, and their way to worker options.
import { z } from "zod";
import { EffortLevelSchema, type ElicitationAnswer, type ThinkingConfig } from "../../protocol/index.ts";
import type { WorkerOptions } from "../../worker/index.ts";

const Display = z.enum(["summarized", "omitted"]).describe("Whether thinking is shown summarized or omitted.");

export const ThinkingSettingSchema = z
  .union([
    z.enum(["adaptive", "disabled"]),
    z.strictObject({
      type: z.enum(["adaptive", "enabled", "disabled"]).describe("adaptive (the model decides), enabled (with budget_tokens) or disabled."),
      budget_tokens: z.int().positive().optional().describe("With type enabled: the thinking budget in tokens."),
      display: Display.optional(),
    }),
  ])
  .describe('Thinking: "adaptive" (the model decides; the CLI\'s default), "disabled", or { type: enabled, budget_tokens: N }.');
export type ThinkingSetting = z.infer<typeof ThinkingSettingSchema>;

/** The keys defaults, agents and tasks all take, beside the reach keys (settings.ts). */
export const controlKeys = {
  effort: EffortLevelSchema.optional().describe("How hard the model works: low, medium, high, xhigh or max (the API's output_config.effort)."),
  thinking: ThinkingSettingSchema.optional(),
  task_budget: z.int().positive().optional().describe("The API-side token budget the model paces itself to (output_config.task_budget)."),
  settings: z
    .union([z.string().min(1), z.record(z.string(), z.unknown())])
    .optional()
    .describe(
      "Claude Code settings over the settings files (as settings.json: permissions, env, hooks, …): an object, sent in initialize, or the path of a settings file relative to this file.",
    ),
  sandbox: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The sandbox of Bash and what it starts, as settings.json's `sandbox` (e.g. { enabled: true }); merged into settings."),
  skills: z
    .union([z.literal("all"), z.array(z.string().min(1))])
    .optional()
    .describe('The skills the model may use: "all", or a list of skill names.'),
  system_prompt: z.string().min(1).optional().describe("Replaces Claude Code's system prompt (an agent's prompt is still appended)."),
  exclude_dynamic_sections: z
    .boolean()
    .optional()
    .describe(
      "Move the per-session parts of Claude Code's system prompt (directory, memory, git status) into the first message, so workers in different directories (worktrees) share the cached prompt.",
    ),
  permission_prompt_tool: z
    .string()
    .regex(/^mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+$/, "an MCP tool, mcp__<server>__<tool>")
    .optional()
    .describe("An MCP tool that decides permission requests instead of cadre's rules (--permission-prompt-tool)."),
  include_hook_events: z.boolean().optional().describe("Report every hook's run as hook_started / hook_response messages in the transcript."),
  main_agent: z.string().min(1).optional().describe("Run the worker's main thread as this Claude Code agent (--agent), found by the CLI."),
  debug_file: z.string().min(1).optional().describe("Write the CLI's debug log to this file (relative to this file)."),
  elicitation: z
    .union([
      z.enum(["decline", "cancel"]),
      z.strictObject({ accept: z.record(z.string(), z.unknown()).describe("The answer given: field name → value.") }),
    ])
    .optional()
    .describe(
      'What an MCP server that asks the user for input (elicitation) is told, since nobody is there to ask: "decline" (the default), "cancel", or { accept: { field: value } }.',
    ),
  verbatim_prompts: z
    .boolean()
    .optional()
    .describe(
      "true: every prompt goes as text only, hand-written ones too: no @path file is read, no /command runs. Prompts that take in a result, an item of a result or the round before are always text only.",
    ),
};

export type Controls = { [K in keyof typeof controlKeys]?: z.infer<(typeof controlKeys)[K]> };

/** The controls that are the same in the worker's options, as the file spells them → as the worker does. */
export const CONTROL_SETTINGS = {
  effort: "effort",
  task_budget: "taskBudget",
  settings: "settings",
  sandbox: "sandbox",
  skills: "skills",
  system_prompt: "systemPrompt",
  exclude_dynamic_sections: "excludeDynamicSections",
  permission_prompt_tool: "permissionPromptToolName",
  include_hook_events: "includeHookEvents",
  main_agent: "agent",
  debug_file: "debugFile",
  verbatim_prompts: "verbatimPrompts",
} as const satisfies Record<Exclude<keyof typeof controlKeys, "thinking" | "elicitation">, keyof WorkerOptions>;

/** The elicitation policy as the worker takes it. */
export function elicitationAnswer(setting: NonNullable<Controls["elicitation"]>): ElicitationAnswer {
  return typeof setting === "string" ? { action: setting } : { action: "accept", content: setting.accept };
}

/** The thinking setting as the worker takes it. */
export function thinkingConfig(setting: ThinkingSetting): ThinkingConfig {
  if (typeof setting === "string") return { type: setting };
  if (setting.type === "disabled") return { type: "disabled" };
  const display = setting.display !== undefined ? { display: setting.display } : {};
  return setting.type === "enabled"
    ? { type: "enabled", ...(setting.budget_tokens !== undefined && { budgetTokens: setting.budget_tokens }), ...display }
    : { type: "adaptive", ...display };
}

/** The controls of one layer with their file paths (debug_file, a settings file) made absolute. */
export function withAbsolutePaths<T extends Controls>(controls: T, absolute: (path: string) => string): T {
  return {
    ...controls,
    ...(controls.debug_file !== undefined && { debug_file: absolute(controls.debug_file) }),
    ...(typeof controls.settings === "string" && { settings: absolute(controls.settings) }),
  };
}

/** The controls among the keys of a layer (a task entry holds other keys too). */
export function controlsOf(layer: Controls): Controls {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(controlKeys) as (keyof Controls)[]) if (layer[key] !== undefined) picked[key] = layer[key];
  return picked as Controls;
}
