// list_background_tasks, stop_background_task, get_task_output and background_tasks: a parent steering a child's background work.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ManagedSession } from "../managed-session.ts";
import { BackgroundTaskInfoSchema, backgroundTaskInfo, renderBackgroundTasks } from "../session-info.ts";
import { ok, SessionIdSchema, type ToolContext } from "./common.ts";

const TaskIdSchema = z.string().min(1).describe("A task_id from list_background_tasks (or the session's background_tasks).");

const BackgroundListSchema = { session_id: z.string(), background_tasks: z.array(BackgroundTaskInfoSchema) };

function listResult(session: ManagedSession, note?: string) {
  const tasks = session.session.backgroundTasks.map(backgroundTaskInfo);
  const lines = [note, `session ${session.id}: ${tasks.length === 0 ? "no background tasks" : "background tasks:"}`, ...renderBackgroundTasks(tasks)];
  return ok({ session_id: session.id, background_tasks: tasks }, lines.filter((line) => line !== undefined).join("\n"));
}

export function registerBackgroundTools(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;

  server.registerTool(
    "list_background_tasks",
    {
      title: "List a child's background tasks",
      description:
        "The workflows, background agents, shells and monitors a child session started, running and ended, with tokens and a workflow's agents. " +
        "The child's turn (and wait_sessions) ends only when all of them have, with the turn that reports them.",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: BackgroundListSchema,
      annotations: { readOnlyHint: true },
    },
    async ({ session_id }) => listResult(registry.find(owner, session_id)),
  );

  server.registerTool(
    "stop_background_task",
    {
      title: "Stop one of a child's background tasks",
      description: "Stop a running background task of a child (a workflow, an agent, a shell, a monitor). The child's turn then reports it and ends.",
      inputSchema: { session_id: SessionIdSchema, task_id: TaskIdSchema },
      outputSchema: BackgroundListSchema,
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async ({ session_id, task_id }) => {
      const session = registry.find(owner, session_id);
      await session.session.stopBackgroundTask(task_id);
      return listResult(session, `asked ${task_id} to stop`);
    },
  );

  server.registerTool(
    "get_task_output",
    {
      title: "Read a child's background shell output",
      description:
        "The end (at most the last 8 KiB) of what a child's background shell or Monitor has printed, running or ended. Costs no model turn.",
      inputSchema: { session_id: SessionIdSchema, task_id: TaskIdSchema },
      outputSchema: { task_id: z.string(), output: z.string(), total_bytes: z.number(), truncated: z.boolean() },
      annotations: { readOnlyHint: true },
    },
    async ({ session_id, task_id }) => {
      const session = registry.find(owner, session_id);
      const answer = await session.session.backgroundTaskOutput(task_id);
      const head = `${task_id}: ${answer.total_bytes} bytes${answer.truncated ? ", the last 8 KiB shown" : ""}`;
      return ok({ task_id, output: answer.output, total_bytes: answer.total_bytes, truncated: answer.truncated }, `${head}\n${answer.output}`);
    },
  );

  server.registerTool(
    "background_tasks",
    {
      title: "Send a child's running work to the background",
      description:
        "Move the Bash commands and subagents a child's turn is waiting on to the background (all of them, or the one tool_use_id names): " +
        "the turn goes on, and the work reports back when it ends.",
      inputSchema: { session_id: SessionIdSchema, tool_use_id: z.string().min(1).optional().describe("Only the work this tool call started.") },
      outputSchema: BackgroundListSchema,
    },
    async ({ session_id, tool_use_id }) => {
      const session = registry.find(owner, session_id);
      await session.session.backgroundForegroundWork(tool_use_id);
      return listResult(session, tool_use_id === undefined ? "sent the running work to the background" : `sent ${tool_use_id} to the background`);
    },
  );
}
