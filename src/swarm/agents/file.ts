// Reading a Markdown agent file (Claude Code's subagent format): front matter and prompt.
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { CadreError } from "../../errors.ts";
import { EffortLevelSchema } from "../../protocol/index.ts";
import { parseYamlOrThrow } from "../../util/yaml.ts";
import { PERMISSION_MODES } from "../../worker/index.ts";
import { McpServerEntrySchema } from "../config/settings.ts";
import { normalizeModel, type SwarmAgentDefinition, toToolList } from "./definition.ts";

/** An agent file that cannot be used: no front matter, bad YAML, a missing name or description, an empty body. */
export class AgentFileError extends CadreError {
  readonly file: string;
  /** What is wrong, without the file name. */
  readonly reason: string;

  constructor(file: string, reason: string, options?: { cause?: unknown }) {
    super("AGENT_FILE_INVALID", `${file}: ${reason}`, options);
    this.file = file;
    this.reason = reason;
  }
}

const required = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `"${what}" is required` : `"${what}" must be a string`),
});
const toolList = (what: string) =>
  z.union([z.string(), z.array(z.string())], { error: `"${what}" must be a comma-separated string or a list of names` });

/**
 * Claude Code's subagent front matter (camelCase). Fields cadre does not use
 * (color, memory, …) pass through, so files written for Claude Code load.
 */
const FrontMatterSchema = z.looseObject({
  name: z.string(required("name")).min(1, `"name" must not be empty`),
  description: z.string(required("description")).min(1, `"description" must not be empty`),
  tools: toolList("tools").optional(),
  disallowedTools: toolList("disallowedTools").optional(),
  model: z.string({ error: `"model" must be a string` }).optional(),
  permissionMode: z
    .enum(PERMISSION_MODES, {
      error: (issue) => `"permissionMode" must be one of ${PERMISSION_MODES.join(", ")}; got ${JSON.stringify(issue.input)}`,
    })
    .optional(),
  maxTurns: z.int({ error: `"maxTurns" must be a positive integer` }).positive(`"maxTurns" must be a positive integer`).optional(),
  effort: z.enum(EffortLevelSchema.options, { error: `"effort" must be one of ${EffortLevelSchema.options.join(", ")}` }).optional(),
  skills: toolList("skills").optional(),
  mcpServers: z
    .array(z.union([z.string(), z.record(z.string(), McpServerEntrySchema)]), {
      error: `"mcpServers" must be a list of server names or { name: { command, args, env } } entries`,
    })
    .optional(),
  hooks: z.record(z.string(), z.unknown(), { error: `"hooks" must be a mapping of hook events, as in settings.json` }).optional(),
});

/** Claude Code's `mcpServers` list: servers defined in place (by name), and names of servers configured elsewhere. */
function mcpServersOf(entries: (string | Record<string, z.infer<typeof McpServerEntrySchema>>)[]): Partial<SwarmAgentDefinition> {
  const names = entries.filter((entry): entry is string => typeof entry === "string");
  const defined = Object.assign({}, ...entries.filter((entry) => typeof entry !== "string"));
  return {
    ...(Object.keys(defined).length > 0 && { mcp_servers: defined }),
    ...(names.length > 0 && { mcp_server_names: names }),
  };
}

const SPECIAL = /[{}[\]*&#!|>%@`]|: /;

/**
 * Claude Code forgives `description: Use this when: …` (an unquoted value that
 * is not valid YAML): when the block fails to parse, it quotes such one-line
 * values and tries again. cadre does the same, so files that work there load here.
 */
function parseFrontMatter(yaml: string): unknown {
  try {
    return parseYamlOrThrow(yaml);
  } catch (error) {
    const quoted = yaml
      .split("\n")
      .map((line) => {
        const [, key, value] = /^([A-Za-z_-]+):\s+(\S.*)$/.exec(line) ?? [];
        if (key === undefined || value === undefined || !SPECIAL.test(value)) return line;
        if (/^(".*"|'.*'|\[.*\])$/.test(value.trim())) return line;
        return `${key}: "${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
      })
      .join("\n")
      .replace(/^\t+/gm, (tabs) => "  ".repeat(tabs.length));
    if (quoted === yaml) throw error;
    try {
      return parseYamlOrThrow(quoted);
    } catch {
      throw error;
    }
  }
}

// `---` on its own line, the YAML, `---` on its own line; a UTF-8 BOM may precede it.
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n?---[ \t]*(?:\r?\n|$)/;

/**
 * Parses a Markdown agent file (YAML front matter with name, description and
 * optional tools/model/…; the body is the system prompt). `file` names the
 * file in error messages and is recorded on the definition.
 */
export function parseAgentFile(text: string, file: string): SwarmAgentDefinition {
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    throw new AgentFileError(file, "no YAML front matter: an agent file starts with a --- block holding at least name and description");
  }
  let data: unknown;
  try {
    data = parseFrontMatter(match[1] ?? "");
  } catch (error) {
    throw new AgentFileError(file, `front matter is not valid YAML: ${(error as Error).message.split("\n")[0]}`, { cause: error });
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AgentFileError(file, "front matter must be a YAML mapping (name: …, description: …)");
  }
  const parsed = FrontMatterSchema.safeParse(data, { reportInput: true });
  if (!parsed.success) {
    throw new AgentFileError(file, parsed.error.issues.map((issue) => issue.message).join("; "));
  }
  const prompt = text.slice(match[0].length).trim();
  if (prompt.length === 0) throw new AgentFileError(file, "the body (the agent's system prompt) is empty");

  const front = parsed.data;
  return {
    name: front.name,
    description: front.description,
    prompt,
    ...(front.tools !== undefined && { tools: toToolList(front.tools) }),
    ...(front.disallowedTools !== undefined && { disallowed_tools: toToolList(front.disallowedTools) }),
    ...(normalizeModel(front.model) !== undefined && { model: normalizeModel(front.model) }),
    ...(front.permissionMode !== undefined && { permission_mode: front.permissionMode }),
    ...(front.maxTurns !== undefined && { max_turns: front.maxTurns }),
    ...(front.effort !== undefined && { effort: front.effort }),
    ...(front.skills !== undefined && { skills: toToolList(front.skills) }),
    ...(front.mcpServers !== undefined && mcpServersOf(front.mcpServers)),
    ...(front.hooks !== undefined && { settings: { hooks: front.hooks } }),
    file,
  };
}

/** Reads and parses an agent file; a missing or unreadable file is an AgentFileError too. */
export async function readAgentFile(file: string): Promise<SwarmAgentDefinition> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "file not found" : code === "EISDIR" ? "is a directory" : (error as Error).message;
    throw new AgentFileError(file, reason, { cause: error });
  }
  return parseAgentFile(text, file);
}

/** The name an agent file would be known by if its front matter gave none: its file name without `.md`. */
export function agentFileStem(file: string): string {
  return basename(file).replace(/\.md$/i, "");
}
