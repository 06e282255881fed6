// One short line for what a task does now (its tool call, its text) and for what it came to.
import type { BackgroundTask, OrchestratorEvent, TaskResult } from "../orchestrator/index.ts";
import type { WorktreeOutcome } from "../swarm/index.ts";
import { oneLine } from "../util/one-line.ts";

/** A message of the CLI, as the orchestrator passes it on. */
type CliMessage = Extract<OrchestratorEvent, { type: "task_message" }>["message"];

/** The part of a tool input worth showing: the command, the file, the peer. */
function toolInput(input: Record<string, unknown>): string {
  for (const key of ["command", "file_path", "path", "pattern", "url", "peer", "description"]) {
    const value = input[key];
    if (typeof value === "string" && value !== "") return key === "peer" ? `${value}: ${String(input.question ?? input.message ?? "")}` : value;
  }
  return "";
}

/** mcp__cadre__ask_peer → ask_peer: the server prefix says nothing to a person watching. */
function toolName(name: string): string {
  return name.startsWith("mcp__") ? name.split("__").slice(2).join("__") || name : name;
}

function blocks(content: unknown): Record<string, unknown>[] {
  return Array.isArray(content) ? content.filter((b): b is Record<string, unknown> => typeof b === "object" && b !== null) : [];
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  return blocks(content)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join(" ");
}

/**
 * What a worker is doing, as a short line for the live view: the tool it
 * calls, the first words of what it says, an API retry, a refused tool call.
 * Undefined for messages that say nothing new (init, stream events, results).
 */
export function activityOf(message: CliMessage): string | undefined {
  switch (message.type) {
    case "assistant": {
      const parts: string[] = [];
      for (const block of message.message.content) {
        if (block.type === "tool_use") parts.push(`${toolName(block.name)} ${toolInput(block.input)}`.trim());
        else if (block.type === "text" && block.text.trim() !== "") parts.push(`“${block.text.trim()}”`);
      }
      return parts.length > 0 ? oneLine(parts.join("; ")) : undefined;
    }
    case "user": {
      const refused = blocks(message.message.content).find((b) => b.type === "tool_result" && b.is_error === true);
      return refused ? oneLine(`tool error: ${resultText(refused.content)}`) : undefined;
    }
    case "system":
      if (message.subtype === "api_retry") {
        const retry = message as { attempt: number; max_retries: number; error_status: number | null; error: string };
        return `API ${retry.error_status ?? retry.error}: retry ${retry.attempt}/${retry.max_retries}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

/** What a finished task came to, in one line: its error, or its answer (✓ schema when it matched the output schema). */
export function resultLine(result: Pick<TaskResult, "text" | "error" | "structuredOutput">, max = 120): string {
  if (result.error) return oneLine(result.error.message, max);
  if (result.structuredOutput !== undefined) return oneLine(`✓ schema ${JSON.stringify(result.structuredOutput)}`, max);
  return oneLine(result.text, max);
}

/** Where a task's worktree work went: its branch and diff stat, or that it changed nothing. */
export function worktreeLine(worktree: Pick<WorktreeOutcome, "branch" | "diffStat">): string {
  return worktree.branch === null ? "changed nothing (no branch)" : `⎇ ${worktree.branch}: ${worktree.diffStat}`;
}

const BACKGROUND_KINDS: Record<string, string> = { local_workflow: "workflow", local_agent: "background agent", local_bash: "background shell" };

/** A background task in one line: `workflow "three agents": running, 2/3 agents done, 28,118 tokens`. */
export function backgroundLine(task: BackgroundTask): string {
  const kind = BACKGROUND_KINDS[task.kind] ?? task.kind;
  const agents =
    task.agents && task.agents.length > 0
      ? `, ${task.agents.filter((agent) => agent.state === "done").length}/${task.agents.length} agents done`
      : "";
  const tokens = task.usage && task.usage.totalTokens > 0 ? `, ${task.usage.totalTokens.toLocaleString("en-US")} tokens` : "";
  return oneLine(`${kind} "${task.description}": ${task.status}${agents}${tokens}`);
}

const WINDOW_NAMES: Record<string, string> = { five_hour: "5-hour window", seven_day: "7-day window" };

/** "waiting for the 5-hour window (resets 14:00)", or that it has reset: what a plan window did, in words. */
export function planWindowLine(news: Omit<Extract<OrchestratorEvent, { type: "plan_window" }>, "type">): string {
  const window = WINDOW_NAMES[news.window] ?? `${news.window.replaceAll("_", " ")} window`;
  if (news.state === "resumed") return `the ${window} has reset: tasks start again`;
  const at = new Date(news.resetsAt);
  const time = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
  const why = news.rejected ? "the plan refused a turn" : news.utilization === undefined ? "" : `${Math.round(news.utilization)} % used`;
  return `waiting for the ${window} (resets ${time})${why ? `: ${why}, no task starts until then` : ""}`;
}
