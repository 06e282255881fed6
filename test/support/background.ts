// Background work on the real CLI: rehearsal scripts that launch a workflow, a background agent or shell, and `claude -p` to compare with.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalScriptInput } from "../../src/rehearsal/script.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { CLAUDE_BIN } from "./claude.ts";
import { tempHome } from "./rehearsal.ts";

/** A workflow of three agents in one phase; each agent's prompt names its number. */
export const THREE_AGENT_WORKFLOW = `export const meta = { name: 'three', description: 'three agents', phases: [{ title: 'Fan' }] }
phase('Fan')
const replies = await parallel([1, 2, 3].map((n) => () => agent('workflow agent number ' + n, { label: 'agent-' + n })))
return { replies }`;

export type BackgroundKind = "workflow" | "bash" | "agent";

export const FINAL_TEXT = "the answer, written after the background work reported back";

/** The tool each kind needs allowed. */
export const ALLOWED_TOOL: Record<BackgroundKind, string> = { workflow: "Workflow", bash: "Bash", agent: "Agent" };

function launch(kind: BackgroundKind, bashCommand: string): RehearsalScriptInput[number] {
  if (kind === "workflow") return { tool_use: { name: "Workflow", input: { script: THREE_AGENT_WORKFLOW } } };
  if (kind === "bash")
    return { tool_use: { name: "Bash", input: { command: bashCommand, description: "background shell", run_in_background: true } } };
  return {
    tool_use: {
      name: "Agent",
      input: { description: "background helper", prompt: "help in the background", subagent_type: "general-purpose", run_in_background: true },
    },
  };
}

/**
 * The main script: launch the work, say "launched", and after the notification
 * the final text; the subagent script (workflow and background agents) answers
 * after `agentDelayMs`.
 */
export function backgroundScripts(
  name: string,
  kind: BackgroundKind,
  options: { agentDelayMs?: number; bashCommand?: string } = {},
): Record<string, RehearsalScriptInput> {
  return {
    [name]: [launch(kind, options.bashCommand ?? "sleep 1; echo background-done"), { text: "launched" }, { text: FINAL_TEXT }],
    [`${name}:subagent`]: [{ text: "agent reply", ...(options.agentDelayMs !== undefined && { delay_ms: options.agentDelayMs }) }],
  };
}

/** What `claude -p` prints as its result for that prompt, on the same script (its own HOME). */
export async function claudePrintResult(server: RehearsalServer, script: string, prompt: string, allowedTool: string): Promise<string> {
  const home = await tempHome();
  const cwd = join(home, "work");
  await mkdir(cwd, { recursive: true });
  const run = await execa(CLAUDE_BIN, ["-p", prompt, "--output-format", "json", "--allowedTools", allowedTool], {
    env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(script), home }),
    extendEnv: false,
    cwd,
    stdin: "ignore",
    timeout: 120_000,
  });
  return (JSON.parse(run.stdout) as { result: string }).result;
}
