import process from "node:process";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type AgentDefinition, type McpServerConfig, type PermissionMode, PermissionModeSchema } from "../protocol/index.ts";
import type { HookConfig } from "./hooks.ts";
import type { PermissionHandler, PermissionPolicy } from "./permissions.ts";

/** The modes cadre offers a worker (`--permission-mode`): the protocol's, less "auto", which cadre does not offer. */
export const PERMISSION_MODES = PermissionModeSchema.exclude(["auto"]).options;
export type SettingSource = "user" | "project" | "local";

/** An MCP server the CLI starts or connects to itself (`--mcp-config`); in-process ones go in sdkMcpServers. */
export type ExternalMcpServer = Exclude<McpServerConfig, { type: "sdk" }>;

export interface WorkerOptions {
  /** The claude executable; otherwise CADRE_CLAUDE_BIN, the pinned CLI, then PATH. */
  claudePath?: string;
  cwd?: string;
  /** Variables set for the child on top of this process's environment (or instead of it, see inheritEnv). */
  env?: Record<string, string | undefined>;
  /** False: the child gets only `env`, nothing of this process's environment. Default true. */
  inheritEnv?: boolean;

  model?: string;
  /** Models to fall back to, in order, when the main one is overloaded or unavailable (`--fallback-model`). */
  fallbackModel?: string;
  /** API beta headers (`--betas`; API-key users only). The CLI sends only the betas it knows, and drops others silently. */
  betas?: string[];
  /** Thinking-token budget from the start (`--max-thinking-tokens`); setMaxThinkingTokens changes it later. */
  maxThinkingTokens?: number;
  maxTurns?: number;
  maxBudgetUsd?: number;
  permissionMode?: PermissionMode;
  allowedTools?: string[];
  disallowedTools?: string[];
  /** The built-in tools available at all (`--tools`). */
  tools?: string[];
  mcpServers?: Record<string, ExternalMcpServer>;
  strictMcpConfig?: boolean;
  settingSources?: SettingSource[];
  additionalDirectories?: string[];
  /** Continue the session with this id in the new process. */
  resume?: string;
  /** With resume: keep the conversation up to and including this message (a TurnResult's lastMessageId), drop the rest. */
  resumeSessionAt?: string;
  /** With resume: branch into a new session id instead of continuing the old one. */
  forkSession?: boolean;
  /** Continue the most recent session in cwd. */
  continueSession?: boolean;
  /** The new session's id (a UUID) instead of a random one (`--session-id`). */
  sessionId?: string;
  /**
   * False: the CLI writes no session file under ~/.claude/projects
   * (`--no-session-persistence`), so the session cannot be resumed or forked later.
   */
  persistSession?: boolean;
  /**
   * Back up files before the CLI edits them, so `rewindFiles` can restore
   * them (the Agent SDK's enableFileCheckpointing).
   */
  fileCheckpointing?: boolean;
  /** Plugin directories (or .zip files) loaded for this session only (`--plugin-dir`, one each). */
  pluginDirs?: string[];
  includePartialMessages?: boolean;
  /** Extra flags: `{ "flag-name": "value" }` becomes `--flag-name value`; null means a flag without value. */
  extraArgs?: Record<string, string | null>;

  /** Subagents the worker's Claude can delegate to; sent in `initialize`. */
  agents?: Record<string, AgentDefinition>;
  hooks?: HookConfig;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  /** Structured output: the final result must match this JSON Schema. */
  jsonSchema?: Record<string, unknown>;
  /** In-process MCP servers by name; the CLI reaches them through mcp_message. One McpServer per worker. */
  sdkMcpServers?: Record<string, McpServer>;

  canUseTool?: PermissionHandler;
  /** Without canUseTool: what happens to a permission request. Default "deny". */
  permissionPolicy?: PermissionPolicy;

  /** Limits, in milliseconds. */
  initializeTimeoutMs?: number;
  controlTimeoutMs?: number;
  /** The wait for a hook callback whose matcher has no `timeoutSeconds`; with one, that limit applies. */
  hookTimeoutMs?: number;
  /** Permission handlers may wait for a person; undefined means no limit. */
  permissionTimeoutMs?: number;
  closeGraceMs?: number;
  maxLineBytes?: number;
  stderrTailBytes?: number;
}

/** The fixed flags that make the CLI speak stream-json and ask cadre for permissions. */
export const STREAM_JSON_ARGS = [
  "-p",
  "--input-format",
  "stream-json",
  "--output-format",
  "stream-json",
  "--verbose",
  "--permission-prompt-tool",
  "stdio",
] as const;

/** Maps worker options to CLI arguments (an array; no shell is involved). */
export function buildArgs(options: WorkerOptions): string[] {
  const args: string[] = [...STREAM_JSON_ARGS];
  const flag = (name: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(name, String(value));
  };
  const list = (name: string, values: string[] | undefined) => {
    if (values !== undefined) args.push(name, values.join(","));
  };
  flag("--model", options.model);
  flag("--fallback-model", options.fallbackModel);
  list("--betas", options.betas);
  flag("--max-thinking-tokens", options.maxThinkingTokens);
  flag("--max-turns", options.maxTurns);
  flag("--max-budget-usd", options.maxBudgetUsd);
  flag("--permission-mode", options.permissionMode);
  if (options.permissionMode === "bypassPermissions") args.push("--allow-dangerously-skip-permissions");
  list("--allowedTools", options.allowedTools);
  list("--disallowedTools", options.disallowedTools);
  list("--tools", options.tools);
  if (options.mcpServers !== undefined) flag("--mcp-config", JSON.stringify({ mcpServers: options.mcpServers }));
  if (options.strictMcpConfig) args.push("--strict-mcp-config");
  list("--setting-sources", options.settingSources);
  for (const dir of options.additionalDirectories ?? []) args.push("--add-dir", dir);
  flag("--resume", options.resume);
  flag("--resume-session-at", options.resumeSessionAt);
  if (options.forkSession) args.push("--fork-session");
  if (options.continueSession) args.push("--continue");
  flag("--session-id", options.sessionId);
  if (options.persistSession === false) args.push("--no-session-persistence");
  for (const dir of options.pluginDirs ?? []) args.push("--plugin-dir", dir);
  if (options.includePartialMessages) args.push("--include-partial-messages");
  for (const [name, value] of Object.entries(options.extraArgs ?? {})) {
    args.push(`--${name}`);
    if (value !== null) args.push(value);
  }
  return args;
}

/**
 * The child's environment: this process's, the caller's additions, and never
 * CLAUDECODE, which would make a claude started by a parent Claude think it is
 * nested inside an interactive session.
 */
export function buildEnv(options: WorkerOptions): Record<string, string | undefined> {
  const inherited = options.inheritEnv === false ? {} : process.env;
  const env: Record<string, string | undefined> = { ...inherited, ...options.env };
  delete env.CLAUDECODE;
  if (options.fileCheckpointing) env.CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING = "true";
  return env;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The session options that only make sense together, checked before a
 * process starts (the CLI would exit with a usage error instead): the
 * problem, or undefined.
 */
export function sessionOptionsProblem(options: WorkerOptions): string | undefined {
  const resuming = options.resume !== undefined || options.continueSession === true;
  // A session id may come back from a record or a tool call: anything but an id could be read by the CLI as a flag.
  if (options.resume !== undefined && !UUID.test(options.resume))
    return `resume must be a session id (a UUID), got ${JSON.stringify(options.resume)}`;
  if (options.resumeSessionAt !== undefined && options.resume === undefined) return "resumeSessionAt needs resume (the session to continue)";
  if (options.forkSession && !resuming) return "forkSession needs resume or continueSession (the session to fork)";
  if (options.sessionId !== undefined) {
    if (!UUID.test(options.sessionId)) return `sessionId must be a UUID, got ${JSON.stringify(options.sessionId)}`;
    if (resuming && !options.forkSession) return "sessionId with resume or continueSession needs forkSession (a resumed session keeps its own id)";
  }
  return undefined;
}
