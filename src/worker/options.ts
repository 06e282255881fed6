// WorkerOptions: every setting of one claude process, and the command line and initialize request they make.
import process from "node:process";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type {
  AgentDefinition,
  ClaudeSettings,
  EffortLevel,
  ElicitationAnswer,
  ElicitationRequest,
  McpServerConfig,
  PermissionMode,
  RequestUserDialogRequest,
  ThinkingConfig,
  UserDialogAnswer,
} from "../protocol/index.ts";
import { PermissionModeSchema } from "../protocol/index.ts";
import type { HookConfig } from "./hooks.ts";
import type { PermissionHandler, PermissionPolicy } from "./permissions.ts";

/** The modes cadre offers a worker (`--permission-mode`): all of the protocol's ("auto": a model classifier decides). */
export const PERMISSION_MODES = PermissionModeSchema.options;
export type SettingSource = "user" | "project" | "local";

/** An MCP server the CLI starts or connects to itself (sent in `initialize`); in-process ones go in sdkMcpServers. */
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
  /** Thinking-token budget from the start (`--max-thinking-tokens`); setMaxThinkingTokens changes it later. Prefer `thinking`. */
  maxThinkingTokens?: number;
  /** Thinking: adaptive (the CLI's default), enabled with a budget, or disabled (`--thinking`, `--thinking-display`). */
  thinking?: ThinkingConfig;
  /** How hard the model works (`--effort`): low, medium, high, xhigh, max; the API gets it as `output_config.effort`. */
  effort?: EffortLevel;
  /** The API-side token budget the model paces itself to (`--task-budget`, `output_config.task_budget`). */
  taskBudget?: number;
  /** The most agentic turns one prompt may take before the CLI ends it (`--max-turns`). */
  maxTurns?: number;
  /** The CLI's own spending limit for the session, in US dollars (`--max-budget-usd`). */
  maxBudgetUsd?: number;
  /** How tool use is approved (`--permission-mode`): "default", "acceptEdits", "plan", "bypassPermissions", "auto", … */
  permissionMode?: PermissionMode;
  /**
   * An MCP tool (`mcp__server__tool`) that answers permission requests
   * instead of cadre (`--permission-prompt-tool`); canUseTool and
   * permissionPolicy then see none.
   */
  permissionPromptToolName?: string;
  /** Tools that run without asking, e.g. `["Read", "Bash(git diff:*)"]` (`--allowedTools`). */
  allowedTools?: string[];
  /** Tools the model may not use at all (`--disallowedTools`). */
  disallowedTools?: string[];
  /** The built-in tools available at all (`--tools`). */
  tools?: string[];
  /**
   * MCP servers by name that the CLI starts or connects to itself. They go in
   * `initialize`, never on the command line, where every local user could
   * read their env and headers.
   */
  mcpServers?: Record<string, ExternalMcpServer>;
  /** Use only `mcpServers`, none from the user's or project's settings (`--strict-mcp-config`). */
  strictMcpConfig?: boolean;
  /** Which settings files the CLI reads (`--setting-sources`); absent: the CLI's default. */
  settingSources?: SettingSource[];
  /**
   * Claude Code settings applied over the files' (the "flag settings" layer):
   * an object goes in `initialize` (it may carry env or hooks), a string is
   * the path of a settings file (`--settings`).
   */
  settings?: ClaudeSettings | string;
  /** The sandbox of Bash and its children (settings.json's `sandbox`), merged into `settings`. */
  sandbox?: Record<string, unknown>;
  /** Skills the model may use: "all", or these names (their `Skill(name)` rules are added to allowedTools). */
  skills?: string[] | "all";
  /** Run the main thread as this agent (`--agent`): its prompt, tools and model. */
  agent?: string;
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
  /** Report every hook's run as `hook_started` / `hook_progress` / `hook_response` system messages (`--include-hook-events`). */
  includeHookEvents?: boolean;
  /** Write the CLI's debug log to this file (`--debug-file`). */
  debugFile?: string;
  /**
   * Send every prompt as text only: an `@path` in it is not read, a leading
   * `/` is not a command (client_composed). `send()` may choose per turn.
   */
  verbatimPrompts?: boolean;
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
  /**
   * With Claude Code's own system prompt: move its per-session parts (working
   * directory, memory, git status) into the first user message, so workers in
   * different directories share the cached prompt prefix. Sent in `initialize`.
   */
  excludeDynamicSections?: boolean;
  /** Structured output: the final result must match this JSON Schema. */
  jsonSchema?: Record<string, unknown>;
  /** In-process MCP servers by name; the CLI reaches them through mcp_message. One McpServer per worker. */
  sdkMcpServers?: Record<string, McpServer>;

  /** Decides each permission request the CLI sends (allow, deny, or allow with changed input). */
  canUseTool?: PermissionHandler;
  /** Without canUseTool: what happens to a permission request. Default "deny". */
  permissionPolicy?: PermissionPolicy;
  /** Answers an MCP server's request for user input (a form or a URL): accept with content, decline or cancel. */
  onElicitation?: (request: ElicitationRequest & { signal: AbortSignal; sessionId: string | undefined }) => Promise<ElicitationAnswer>;
  /** Without onElicitation: the answer every elicitation gets. Default `{ action: "decline" }`. */
  elicitationPolicy?: ElicitationAnswer;
  /** Shows a dialog a tool asks for (`request_user_dialog`) and returns its result; only for `supportedDialogKinds`. */
  onUserDialog?: (request: RequestUserDialogRequest & { signal: AbortSignal; sessionId: string | undefined }) => Promise<UserDialogAnswer>;
  /** The dialog kinds onUserDialog can show; the CLI sends no others (sent in `initialize`). */
  supportedDialogKinds?: string[];

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

/** The flags that make the CLI speak stream-json and ask its host for permissions (test harnesses start the CLI with them). */
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

/**
 * What a worker starts with: stream-json, and `--await-initialize`, without
 * which the CLI starts before it reads `initialize` and ignores the MCP
 * servers and settings it carries (measured on 2.1.332: mcp_servers_applied false).
 */
const WORKER_ARGS = [...STREAM_JSON_ARGS.slice(0, 6), "--await-initialize"];

/** What `initialize` carries that the command line must not: settings (env, hooks, sandbox) and the skills list. */
export function initializeSettings(options: WorkerOptions): ClaudeSettings | undefined {
  const { settings, sandbox } = options;
  if (typeof settings === "string") return undefined;
  if (settings === undefined && sandbox === undefined) return undefined;
  const sandboxes = [settings?.sandbox, sandbox].filter((s): s is Record<string, unknown> => typeof s === "object" && s !== null);
  return { ...settings, ...(sandboxes.length > 0 && { sandbox: Object.assign({}, ...sandboxes) }) };
}

/** The allow rules `skills` stands for. */
function skillRules(skills: WorkerOptions["skills"]): string[] {
  if (skills === undefined) return [];
  return skills === "all" ? ["Skill"] : skills.map((name) => `Skill(${name})`);
}

function thinkingArgs(thinking: ThinkingConfig | undefined): string[] {
  if (thinking === undefined) return [];
  // The CLI's --thinking is a hidden flag that takes its value only joined with "=" (2.1.332).
  if (thinking.type === "disabled") return ["--thinking=disabled"];
  const args =
    thinking.type === "enabled" && thinking.budgetTokens !== undefined
      ? ["--max-thinking-tokens", String(thinking.budgetTokens)]
      : ["--thinking=adaptive"];
  return thinking.display === undefined ? args : [...args, "--thinking-display", thinking.display];
}

/** Maps worker options to CLI arguments (an array; no shell is involved). */
export function buildArgs(options: WorkerOptions): string[] {
  const args: string[] = [...WORKER_ARGS];
  const flag = (name: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(name, String(value));
  };
  const list = (name: string, values: string[] | undefined) => {
    if (values !== undefined) args.push(name, values.join(","));
  };
  flag("--model", options.model);
  flag("--fallback-model", options.fallbackModel);
  list("--betas", options.betas);
  flag("--permission-prompt-tool", options.permissionPromptToolName ?? "stdio");
  flag("--max-thinking-tokens", options.thinking === undefined ? options.maxThinkingTokens : undefined);
  args.push(...thinkingArgs(options.thinking));
  flag("--effort", options.effort);
  flag("--task-budget", options.taskBudget);
  flag("--agent", options.agent);
  flag("--max-turns", options.maxTurns);
  flag("--max-budget-usd", options.maxBudgetUsd);
  flag("--permission-mode", options.permissionMode);
  if (options.permissionMode === "bypassPermissions") args.push("--allow-dangerously-skip-permissions");
  const allowed = [...(options.allowedTools ?? []), ...skillRules(options.skills)];
  list("--allowedTools", allowed.length > 0 ? allowed : undefined);
  list("--disallowedTools", options.disallowedTools);
  list("--tools", options.tools);
  // MCP servers go in initialize (see Worker), never as --mcp-config: their env and headers would be on the command line.
  if (options.strictMcpConfig) args.push("--strict-mcp-config");
  list("--setting-sources", options.settingSources);
  if (typeof options.settings === "string") flag("--settings", options.settings);
  else if (initializeSettings(options) !== undefined) args.push("--initialize-fields", "settings");
  if (options.includeHookEvents) args.push("--include-hook-events");
  flag("--debug-file", options.debugFile);
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
  // A known startup failure then comes as a result naming its reason (startup_failure_reason), not only as stderr.
  env.CLAUDE_CODE_STARTUP_FAILURE_RESULTS = "1";
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
  if (typeof options.settings === "string" && options.sandbox !== undefined)
    return "sandbox cannot be merged into a settings file given by path: put the sandbox in that file, or give settings as an object";
  if (options.permissionPromptToolName !== undefined && options.canUseTool !== undefined)
    return "give canUseTool or permissionPromptToolName, not both: with a permission prompt tool the CLI asks that tool, not cadre";
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
