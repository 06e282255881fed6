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
  fallbackModel?: string;
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
  /** With resume: branch into a new session id instead of continuing the old one. */
  forkSession?: boolean;
  /** Continue the most recent session in cwd. */
  continueSession?: boolean;
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
  if (options.forkSession) args.push("--fork-session");
  if (options.continueSession) args.push("--continue");
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
  return env;
}
