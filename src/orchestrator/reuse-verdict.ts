// Whether a finished task's process may serve another task after /clear, or must be closed.
import type { CliMessage } from "../protocol/index.ts";
import type { BackgroundTask, ConversationReset } from "../worker/index.ts";
import type { SessionBaseline } from "./worker-binding.ts";

/**
 * Whether a process may serve another task after /clear: only when nothing
 * of the finished task can reach the next one. Measured on CLI 2.1.330 (the
 * tests in test/orchestrator/reuse.test.ts pin it): /clear starts a new
 * session with none of the conversation, and the shell's directory back at
 * the start; it keeps permission rules and a permission mode granted for the
 * session, and background tasks keep running. What cadre cannot see undone
 * (a tool whose state lives in the process, an MCP server the CLI runs
 * itself) ends the process instead.
 */

/** Tools that leave nothing in the process once the conversation is gone (in the foreground). */
const STATELESS_TOOLS = new Set([
  "Read",
  "Write",
  "Edit",
  "MultiEdit",
  "NotebookEdit",
  "Glob",
  "Grep",
  "LS",
  "Bash",
  "WebFetch",
  "WebSearch",
  "AskUserQuestion",
  "Task",
  "Agent",
  "Skill",
  "ListAgents",
  "ToolSearch",
]);

function toolUses(messages: readonly CliMessage[]): { name: string; input: Record<string, unknown> }[] {
  const uses: { name: string; input: Record<string, unknown> }[] = [];
  for (const message of messages) {
    if (message.type !== "assistant") continue;
    for (const block of message.message.content) {
      if (block.type === "tool_use") uses.push({ name: String(block.name), input: (block.input ?? {}) as Record<string, unknown> });
    }
  }
  return uses;
}

/**
 * The one rule for background work: a process whose background task (a shell, an agent, a
 * workflow, a monitor) outlives the task that started it serves no other task. A task ends
 * only when its session is done (Worker), so this holds for a task stopped with its work
 * still running, and for what /clear reports still running.
 */
function whyBackgroundOutlives(running: readonly Pick<BackgroundTask, "id" | "description">[]): string | undefined {
  if (running.length === 0) return undefined;
  return `background tasks outlive the task: ${running.map((task) => task.description || task.id).join(", ")}`;
}

/** Why the process of a task that ended with these messages must not serve another task, or undefined when it may. */
export function whyNotReusable(
  messages: readonly CliMessage[],
  process: { grantedPermissions: boolean; externalMcpServers: readonly string[]; runningBackgroundTasks: readonly BackgroundTask[] },
): string | undefined {
  const outlives = whyBackgroundOutlives(process.runningBackgroundTasks);
  if (outlives !== undefined) return outlives;
  if (process.grantedPermissions) return "a permission answer granted rules or a mode for the session, which /clear keeps";
  for (const use of toolUses(messages)) {
    const server = /^mcp__(.+?)__/.exec(use.name)?.[1];
    if (server !== undefined) {
      if (process.externalMcpServers.includes(server)) return `the task used the MCP server "${server}", whose state the process keeps`;
      continue;
    }
    if (!STATELESS_TOOLS.has(use.name)) return `the task used ${use.name}, whose state /clear may keep`;
  }
  return undefined;
}

/** Why a process is not as a new one after /clear, or undefined when it is. */
export function whyResetLeftState(reset: ConversationReset, baseline: SessionBaseline | undefined): string | undefined {
  const outlives = whyBackgroundOutlives(reset.backgroundTasks.map((task) => ({ id: task.task_id, description: task.description })));
  if (outlives !== undefined) return outlives;
  if (baseline && reset.init.cwd !== baseline.cwd) return `the working directory is ${reset.init.cwd}, not ${baseline.cwd}`;
  if (baseline && reset.init.permissionMode !== baseline.permissionMode) {
    return `the permission mode is ${reset.init.permissionMode}, not ${baseline.permissionMode}`;
  }
  return undefined;
}
