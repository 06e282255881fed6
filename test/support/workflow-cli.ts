// Driving the pinned CLI's own workflow runtime offline (conformance tests, bench:workflow; no vitest, for the bench).
import { readFile } from "node:fs/promises";
import type { RehearsalScriptInput, RehearsalScriptsInput } from "../../src/rehearsal/index.ts";
import { SUBAGENT_SCRIPT_SUFFIX } from "../../src/rehearsal/scripting.ts";

/** The script cadre's workers play: point their base URL at it (`server.baseUrlFor(CADRE_AGENTS_SCRIPT)`). */
export const CADRE_AGENTS_SCRIPT = "agents";
/** The script the CLI's main loop plays (its base URL names none); its subagents play this name's subagent script. */
export const CLAUDE_MAIN_SCRIPT = "default";

/** What a workflow run gives back: the CLI's output file, or cadre's summary.json (which has more). */
export interface WorkflowOutcome {
  result: unknown;
  logs: string[];
}

/**
 * The scripted model for both runtimes: every agent, the CLI's subagents as cadre's workers, plays `agent`; with a
 * script, the CLI's main loop launches it (see launchWorkflow), else a test sets that script per run.
 */
export function workflowModel(agent: RehearsalScriptInput, script?: string, args?: unknown): RehearsalScriptsInput {
  return {
    [`${CLAUDE_MAIN_SCRIPT}${SUBAGENT_SCRIPT_SUFFIX}`]: agent,
    [CADRE_AGENTS_SCRIPT]: agent,
    ...(script === undefined ? {} : { [CLAUDE_MAIN_SCRIPT]: launchWorkflow(script, args) }),
  };
}

/** The CLI's main loop: call the Workflow tool with the script, say it launched, and answer the task's notification. */
export function launchWorkflow(script: string, args?: unknown): RehearsalScriptInput {
  return [{ tool_use: { name: "Workflow", input: args === undefined ? { script } : { script, args } } }, { text: "launched" }, { text: "done" }];
}

/** `claude -p` as a user runs a workflow in print mode, with only the Workflow tool allowed. */
export function claudeWorkflowArgs(prompt = "run the workflow"): string[] {
  return ["-p", prompt, "--allowedTools", "Workflow", "--output-format", "stream-json", "--verbose"];
}

/**
 * From what `claude -p` printed: the run's output (the file its task_notification names), or the Workflow tool's
 * refusal; undefined when it did neither.
 */
export async function workflowOutcome(stdout: string): Promise<WorkflowOutcome | { refused: string } | undefined> {
  const lines = stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const notification = lines.find((line) => line.subtype === "task_notification");
  if (notification !== undefined) return JSON.parse(await readFile(notification.output_file as string, "utf8")) as WorkflowOutcome;
  for (const line of lines) {
    const content = (line.message as { content?: unknown } | undefined)?.content;
    const refusal = Array.isArray(content) ? content.find((block) => block?.type === "tool_result" && block.is_error) : undefined;
    if (refusal) return { refused: String(refusal.content) };
  }
  return undefined;
}
