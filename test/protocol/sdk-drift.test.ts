// The drift check: every control subtype, message type, hook event and session option the Agent SDK matching the pinned
// CLI declares is handled by cadre or listed here, with a reason, as not offered. Bumping the CLI shows what is new.
import { describe, expect, it } from "vitest";
import {
  CLI_MESSAGE_SCHEMAS,
  HookEventSchema,
  InboundControlRequestSchema,
  OutboundControlRequestSchema,
  SYSTEM_MESSAGE_SCHEMAS,
} from "../../src/protocol/index.ts";
import type { WorkerOptions } from "../../src/worker/index.ts";
import { readSdkSurface, type SdkSurface } from "./sdk-surface.ts";

/** Control subtypes cadre does not send or answer, each with why. */
const CONTROL_NOT_OFFERED: Record<string, string> = {
  set_color: "the CLI's prompt-bar colour: cadre has no terminal UI of the CLI's",
  get_session_cost: "cadre counts cost from each result's total_cost_usd and keeps its own ledger",
  get_binary_version: "the version comes in initialize's answer (claude_code_version)",
  file_suggestions: "@-mention autocomplete for a person typing; cadre's prompts are composed",
  read_file: "cadre reads files itself; no host file access through the CLI is needed",
  seed_read_state: "for hosts that edit transcripts; cadre does not rewrite a conversation",
  register_repo_root: "for remote hosts mapping repositories; cadre's workers run where their files are",
  reload_output_styles: "output styles are a terminal concern; cadre takes the result text",
  set_has_subscribers: "multi-client remote sessions; a cadre worker has one host",
  stop_task: "handled elsewhere: background tasks are another branch's work (the lead reconciles)",
  background_tasks: "handled elsewhere: background tasks are another branch's work (the lead reconciles)",
  get_task_output: "handled elsewhere: background tasks are another branch's work (the lead reconciles)",
  get_hooks_listing: "cadre registers its hooks itself and knows them",
  update_settings: "apply_flag_settings covers a running session's settings",
  mcp_read_resource: "MCP resources are the model's to read through its tools; mcp_call covers direct calls",
};

/** Message types cadre does not parse (they pass through as unknown), each with why. */
const MESSAGES_NOT_PARSED: Record<string, string> = {};

/** Hook events cadre does not route, each with why. */
const HOOKS_NOT_OFFERED: Record<string, string> = {};

/** SDK options and cadre's name for them (a WorkerOptions key), or why not. */
const OPTIONS_HANDLED: Record<string, keyof WorkerOptions> = {
  additionalDirectories: "additionalDirectories",
  agent: "agent",
  agents: "agents",
  allowedTools: "allowedTools",
  canUseTool: "canUseTool",
  continue: "continueSession",
  cwd: "cwd",
  disallowedTools: "disallowedTools",
  tools: "tools",
  env: "env",
  extraArgs: "extraArgs",
  fallbackModel: "fallbackModel",
  enableFileCheckpointing: "fileCheckpointing",
  forkSession: "forkSession",
  betas: "betas",
  hooks: "hooks",
  onElicitation: "onElicitation",
  onUserDialog: "onUserDialog",
  supportedDialogKinds: "supportedDialogKinds",
  persistSession: "persistSession",
  includeHookEvents: "includeHookEvents",
  includePartialMessages: "includePartialMessages",
  verbatimPrompts: "verbatimPrompts",
  thinking: "thinking",
  effort: "effort",
  maxThinkingTokens: "maxThinkingTokens",
  maxTurns: "maxTurns",
  maxBudgetUsd: "maxBudgetUsd",
  taskBudget: "taskBudget",
  mcpServers: "mcpServers",
  model: "model",
  outputFormat: "jsonSchema",
  pathToClaudeCodeExecutable: "claudePath",
  permissionMode: "permissionMode",
  permissionPromptToolName: "permissionPromptToolName",
  plugins: "pluginDirs",
  resume: "resume",
  sessionId: "sessionId",
  resumeSessionAt: "resumeSessionAt",
  sandbox: "sandbox",
  settings: "settings",
  settingSources: "settingSources",
  skills: "skills",
  debugFile: "debugFile",
  strictMcpConfig: "strictMcpConfig",
  systemPrompt: "systemPrompt",
};

const OPTIONS_NOT_OFFERED: Record<string, string> = {
  abortController: "cadre takes an AbortSignal per call (send, run, start)",
  projectConfigRoot: "for hosts whose cwd is not the project; a cadre worker's cwd is",
  toolAliases: "redirects built-in tools for remote sandboxes; cadre runs tools where the worker is",
  executable: "the pinned CLI is a native binary; no JavaScript runtime is chosen",
  executableArgs: "the pinned CLI is a native binary; no JavaScript runtime is chosen",
  toolConfig: "AskUserQuestion's preview format is a UI concern; cadre answers questions as data",
  perTaskStopAffordance: "handled elsewhere: background tasks are another branch's work (the lead reconciles)",
  sessionStore: "cadre keeps transcripts where the CLI writes them and records paths",
  sessionStoreFlush: "cadre keeps transcripts where the CLI writes them and records paths",
  loadTimeoutMs: "belongs to sessionStore, which cadre does not offer",
  forwardSubagentText: "subagent text is in the transcripts; the stream carries what cadre shows",
  mcpServersDelivery: "always 'initialize': secrets never go on a command line",
  planModeInstructions: "plan mode's prompt stays Claude Code's",
  allowDangerouslySkipPermissions: "implied by permissionMode bypassPermissions",
  permissionPrompts: "cadre answers permission prompts itself (canUseTool, permissionPolicy)",
  pluginDelivery: "plugins are directories given by path; nothing secret to move off argv",
  promptSuggestions: "suggestions of the next prompt are for a person typing",
  agentProgressSummaries: "cadre reports progress from the stream itself",
  resumeDropsTurn: "cadre resumes at a message (resumeSessionAt) instead",
  managedSettings: "administrator policy is the machine's, not a run's",
  debug: "debugFile writes the same log where it can be read; stderr keeps only a tail",
  stderr: "a worker keeps the tail of stderr for its exit error (stderrTailBytes)",
  title: "renameSession names a session at any time",
  spawnClaudeCodeProcess: "cadre starts and ends its processes itself (process groups, the reaper)",
};

/** What the SDK declares that cadre neither handles nor lists, by kind; empty when nothing drifted. */
function drift(sdk: SdkSurface, lists = { control: CONTROL_NOT_OFFERED, options: OPTIONS_NOT_OFFERED }): Record<string, string[]> {
  const control = new Set<string>(
    [...InboundControlRequestSchema.options, ...OutboundControlRequestSchema.options].map((s) => s.shape.subtype.value),
  );
  const messages = new Set([...Object.keys(CLI_MESSAGE_SCHEMAS), ...Object.keys(SYSTEM_MESSAGE_SCHEMAS).map((s) => `system/${s}`)]);
  const hooks = new Set<string>(HookEventSchema.options);
  const result = {
    control: sdk.controlSubtypes.filter((s) => !control.has(s) && !(s in lists.control)),
    messages: sdk.messageTypes.filter((t) => !messages.has(t) && !(t in MESSAGES_NOT_PARSED)),
    hooks: sdk.hookEvents.filter((e) => !hooks.has(e) && !(e in HOOKS_NOT_OFFERED)),
    options: sdk.options.filter((o) => !(o in OPTIONS_HANDLED) && !(o in lists.options)),
  };
  return Object.fromEntries(Object.entries(result).filter(([, missing]) => missing.length > 0));
}

describe("drift from the Agent SDK's declarations", () => {
  const sdk = readSdkSurface();

  it("reads the declarations (a parser that finds nothing would pass anything)", () => {
    expect(sdk.controlSubtypes.length).toBeGreaterThan(35);
    expect(sdk.messageTypes.length).toBeGreaterThan(35);
    expect(sdk.hookEvents).toContain("PreToolUse");
    expect(sdk.options).toContain("verbatimPrompts");
  });

  it("finds everything handled or listed with a reason", () => {
    expect(drift(sdk)).toEqual({});
    for (const reason of [...Object.values(CONTROL_NOT_OFFERED), ...Object.values(OPTIONS_NOT_OFFERED)]) expect(reason.length).toBeGreaterThan(10);
  });

  it("fails when a subtype or an option leaves its list", () => {
    const { set_color: _, ...control } = CONTROL_NOT_OFFERED;
    const { title: __, ...options } = OPTIONS_NOT_OFFERED;
    expect(drift(sdk, { control, options })).toEqual({ control: ["set_color"], options: ["title"] });
  });

  it("lists nothing the SDK no longer declares, and handles nothing it also lists", () => {
    const declared = new Set([...sdk.controlSubtypes, ...sdk.options]);
    const stale = [...Object.keys(CONTROL_NOT_OFFERED), ...Object.keys(OPTIONS_NOT_OFFERED), ...Object.keys(OPTIONS_HANDLED)].filter(
      (name) => !declared.has(name),
    );
    expect(stale).toEqual([]);
    expect(Object.keys(OPTIONS_HANDLED).filter((name) => name in OPTIONS_NOT_OFFERED)).toEqual([]);
  });
});
