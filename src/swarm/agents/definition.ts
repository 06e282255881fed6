// An agent as cadre uses it, inline in a swarm file or read from an agent file.
import { z } from "zod";
import { PERMISSION_MODES } from "../../worker/index.ts";
import { controlKeys } from "../config/controls.ts";
import { McpServersSchema } from "../config/settings.ts";

/** The permission modes a swarm file may name: the ones a cadre worker offers. */
export const SwarmPermissionModeSchema = z.enum(PERMISSION_MODES);

/**
 * An agent as cadre uses it, whether it was written inline in a swarm config
 * or read from a Markdown agent file: the system prompt a worker runs with and
 * the settings that go with it. Keys are snake_case like the config file's.
 */
export const SwarmAgentDefinitionSchema = z.object({
  name: z.string().min(1),
  description: z.string().min(1),
  /** The system prompt (an agent file's body). */
  prompt: z.string().min(1),
  /** The tools the agent may use; absent means every tool, [] means none. */
  tools: z.array(z.string()).optional(),
  disallowed_tools: z.array(z.string()).optional(),
  /** A model alias or id; absent (or "inherit" in a file) means the swarm's default model. */
  model: z.string().optional(),
  permission_mode: SwarmPermissionModeSchema.optional(),
  max_turns: z.int().positive().optional(),
  /** Claude Code's `effort`: how hard the model works as this agent. */
  effort: controlKeys.effort,
  /** Claude Code's `skills`: the skills the agent may use. */
  skills: controlKeys.skills,
  /** Claude Code's `mcpServers`, the ones defined in place (by name); they reach the worker through initialize. */
  mcp_servers: McpServersSchema.optional(),
  /** Claude Code's `mcpServers` that name servers configured elsewhere: a subagent gets them; a worker's CLI loads them anyway. */
  mcp_server_names: z.array(z.string()).optional(),
  /** Settings the agent brings (an agent file's `hooks` become `settings.hooks`, run by the CLI). */
  settings: controlKeys.settings,
  /** cadre's, not Claude Code's: reuse the agent's processes across its tasks (inline agents only). */
  reuse: z.union([z.boolean(), z.int().positive()]).optional(),
  /** The absolute path of the Markdown file it came from; absent for inline definitions. */
  file: z.string().optional(),
});
export type SwarmAgentDefinition = z.infer<typeof SwarmAgentDefinitionSchema>;

/** "Read, Grep, Glob" or ["Read", "Grep"] → ["Read", "Grep", "Glob"]: Claude Code's agent files allow both. */
export function toToolList(value: string | string[]): string[] {
  const items = typeof value === "string" ? value.split(",") : value;
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}

/** Claude Code agent files say `model: inherit` for "the parent's model"; for a worker that is the swarm default. */
export function normalizeModel(model: string | undefined): string | undefined {
  return model === undefined || model === "inherit" ? undefined : model;
}
