// Which worker options change the prompt prefix the CLI sends, so workers of one key can share the API's cache.
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import process from "node:process";
import { buildEnv, type WorkerOptions } from "./options.ts";

/**
 * Which worker options change the prefix the CLI puts before the
 * conversation in every request (tools, then the system prompt): workers
 * whose options give the same key send the same prefix, so the API can cache
 * it once for all of them.
 *
 * Measured on claude 2.1.330 by comparing the first requests of workers that
 * differ in one option (test/worker/prompt-prefix.test.ts keeps this true):
 *
 * - change it: model, cwd and HOME (the system prompt names the memory
 *   directory of the project; with excludeDynamicSections, measured on
 *   2.1.332, that section moves to the first message and cwd no longer
 *   counts), systemPrompt, appendSystemPrompt, tools,
 *   disallowedTools, permissionMode (plan mode has other tools), MCP servers,
 *   in-process ones included (their tools), jsonSchema (a StructuredOutput
 *   tool), and environment variables such as ENABLE_TOOL_SEARCH;
 * - leave it alone: the prompt, allowedTools, agents (listed in a message
 *   after the prompt), hooks, maxTurns, maxBudgetUsd, maxThinkingTokens,
 *   fallbackModel, includePartialMessages, additionalDirectories, the
 *   session's id and persistence, permission handling, and ANTHROPIC_BASE_URL
 *   (where the request goes, not what it says).
 *
 * Options that could change it and were not seen to (settingSources, which
 * may bring an output style; plugins; betas; the claude executable; extra
 * flags; the rest of the environment) count as changing it: a group split
 * for nothing costs only the saving, a group merged wrongly makes a worker
 * wait for nothing. In-process MCP servers count by name.
 */

/** The environment variable whose value never reaches a request's prefix: the endpoint. */
const ENDPOINT_VARIABLE = "ANTHROPIC_BASE_URL";

export function promptPrefixKey(options: WorkerOptions): string {
  const env = Object.entries(buildEnv(options))
    .filter(([name, value]) => name !== ENDPOINT_VARIABLE && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const parts = {
    claudePath: options.claudePath,
    cwd: options.excludeDynamicSections === true ? undefined : resolve(options.cwd ?? process.cwd()),
    excludeDynamicSections: options.excludeDynamicSections,
    agent: options.agent,
    settings: options.settings,
    sandbox: options.sandbox,
    skills: options.skills,
    env,
    model: options.model,
    permissionMode: options.permissionMode,
    systemPrompt: options.systemPrompt,
    appendSystemPrompt: options.appendSystemPrompt,
    tools: options.tools,
    disallowedTools: options.disallowedTools,
    mcpServers: options.mcpServers,
    strictMcpConfig: options.strictMcpConfig,
    sdkMcpServers: Object.keys(options.sdkMcpServers ?? {}).sort(),
    jsonSchema: options.jsonSchema,
    settingSources: options.settingSources,
    pluginDirs: options.pluginDirs,
    betas: options.betas,
    extraArgs: options.extraArgs,
  };
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);
}
