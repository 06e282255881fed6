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
  /** The working directory of the claude process (its tools' starting folder); default: this process's. */
  cwd?: string;
  /** Variables set for the child on top of this process's environment (or instead of it, see inheritEnv). */
  env?: Record<string, string | undefined>;
  /** False: the child gets only `env`, nothing of this process's environment. Default true. */
  inheritEnv?: boolean;

  /** Model alias or id (`--model`, e.g. "sonnet"); default: the CLI's. */
  model?: string;
  /** Models to fall back to, in order, when the main one is overloaded or unavailable (`--fallback-model`). */
  fallbackModel?: string;
  /** API beta headers (`--betas`; API-key users only). The CLI sends only the betas it knows, and drops others silently. */
  betas?: string[];
  /** Thinking-token budget from the start (`--max-thinking-tokens`); setMaxThinkingTokens changes it later. */
  maxThinkingTokens?: number;
  /** The most agentic turns one prompt may take before the CLI ends it (`--max-turns`). */
  maxTurns?: number;
  /** The CLI's own spending limit for the session, in US dollars (`--max-budget-usd`). */
  maxBudgetUsd?: number;
  /** How tool use is approved (`--permission-mode`): "default", "acceptEdits", "plan", "bypassPermissions", … */
  permissionMode?: PermissionMode;
  /** Tools that run without asking, e.g. `["Read", "Bash(git diff:*)"]` (`--allowedTools`). */
  allowedTools?: string[];
  /** Tools the model may not use at all (`--disallowedTools`). */
  disallowedTools?: string[];
  /** The built-in tools available at all (`--tools`). */
  tools?: string[];
  /** MCP servers by name that the CLI starts or connects to itself (`--mcp-config`). */
  mcpServers?: Record<string, ExternalMcpServer>;
  /** Use only `mcpServers`, none from the user's or project's settings (`--strict-mcp-config`). */
  strictMcpConfig?: boolean;
  /** Which settings files the CLI reads (`--setting-sources`); absent: the CLI's default. */
  settingSources?: SettingSource[];
  /** Folders beside cwd that tools may read and write (`--add-dir`, one each). */
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
  /** Stream the model's output as it is generated (`stream_event` messages, `--include-partial-messages`). */
  includePartialMessages?: boolean;
  /** Extra flags: `{ "flag-name": "value" }` becomes `--flag-name value`; null means a flag without value. */
  extraArgs?: Record<string, string | null>;

  /** Subagents the worker's Claude can delegate to; sent in `initialize`. */
  agents?: Record<string, AgentDefinition>;
  /** Functions cadre runs at the CLI's hook events (PreToolUse, Stop, …), by event and tool matcher; sent in `initialize`. */
  hooks?: HookConfig;
  /** Replaces Claude Code's system prompt; sent in `initialize`. */
  systemPrompt?: string;
  /** Appended to Claude Code's system prompt; sent in `initialize`. */
  appendSystemPrompt?: string;
  /** Structured output: the final result must match this JSON Schema. */
  jsonSchema?: Record<string, unknown>;
  /** In-process MCP servers by name; the CLI reaches them through mcp_message. One McpServer per worker. */
  sdkMcpServers?: Record<string, McpServer>;

  /** Decides each permission request the CLI sends (allow, deny, or allow with changed input). */
  canUseTool?: PermissionHandler;
  /** Without canUseTool: what happens to a permission request. Default "deny". */
  permissionPolicy?: PermissionPolicy;

  /** Limits, in milliseconds. The wait for the CLI's answer to `initialize` (its start-up; default 60,000). */
  initializeTimeoutMs?: number;
  /** The wait for the CLI's answer to a control request cadre sends (interrupt, setModel, …; default 30,000). */
  controlTimeoutMs?: number;
  /** The wait for a hook callback whose matcher has no `timeoutSeconds`; with one, that limit applies. */
  hookTimeoutMs?: number;
  /** Permission handlers may wait for a person; undefined means no limit. */
  permissionTimeoutMs?: number;
  /** After close(), how long the process has to exit on its own before SIGTERM, then SIGKILL (default 2,000). */
  closeGraceMs?: number;
  /** The longest line of output accepted from the CLI; a longer one ends the worker with a protocol error (default 32 MiB). */
  maxLineBytes?: number;
  /** How much of the CLI's stderr a worker keeps, for the error that reports its exit (default 8 KiB). */
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
  // session_state_changed "idle" says when a turn and the background agents and workflows holding it are over (worker.ts).
  env.CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS = "1";
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
