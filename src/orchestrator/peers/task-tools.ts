// The post_task, list_tasks and wait_tasks tools of cadre's MCP server: a worker adds tasks to the run it is in.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type BoardResult, MAX_POSTED_PROMPT_BYTES, type TaskBoard } from "../types.ts";

export const TASK_TOOL_NAMES = ["post_task", "list_tasks", "wait_tasks"] as const;

export const PostTaskOutputSchema = z.object({ name: z.string(), existed: z.boolean() });
const BoardTaskOutput = z.object({
  name: z.string(),
  status: z.string(),
  agent: z.string().optional(),
  posted_by: z.string().optional(),
  result: z.string().optional(),
});
export const ListTasksOutputSchema = z.object({ tasks: z.array(BoardTaskOutput) });
const ResultOutput = z.object({ name: z.string(), status: z.string(), text: z.string(), error: z.string().optional() });
export const WaitTasksOutputSchema = z.object({ results: z.array(ResultOutput) });

function refuse(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }] };
}

function resultLine(result: BoardResult): string {
  const text = result.status === "succeeded" ? result.text : (result.error ?? result.text);
  return `## ${result.name} (${result.status})\n${text}`;
}

/**
 * Adds the tools to one worker's server. `poster` names the task the worker
 * runs at the time of each call (a process may serve several tasks); a
 * worker with no task (a peer session) cannot post.
 */
export function registerTaskTools(server: McpServer, poster: () => string | undefined, board: TaskBoard): void {
  const who = (): string => {
    const name = poster();
    if (name === undefined) throw new Error("only a task's worker may post tasks");
    return name;
  };

  server.registerTool(
    "post_task",
    {
      description:
        "Add a task to the run you are in: it runs in its own worker, beside yours, as the run's other tasks do. Returns at once with its name; " +
        "read its result with wait_tasks. It sees none of your context: give a complete prompt. Posting the same name again is the same task.",
      inputSchema: {
        prompt: z
          .string()
          .min(1)
          .describe(`the whole task, at most ${MAX_POSTED_PROMPT_BYTES / 1024} KB: put what is longer in a file and name the file`),
        name: z.string().min(1).max(64).optional().describe("a short name (letters, digits, . _ -); default: one is made"),
        agent: z.string().min(1).optional().describe("an agent of this run to run it as; default: a plain worker"),
        depends_on: z.array(z.string().min(1)).optional().describe("tasks you posted that must end first"),
      },
      outputSchema: PostTaskOutputSchema,
    },
    async ({ prompt, name, agent, depends_on }) => {
      try {
        const posted = await board.post(who(), { prompt, name, agent, dependsOn: depends_on });
        const text = posted.existed ? `${posted.name} was posted before; it is the same task` : `posted ${posted.name}`;
        return { structuredContent: posted, content: [{ type: "text", text }] };
      } catch (error) {
        return refuse(error);
      }
    },
  );

  server.registerTool(
    "list_tasks",
    { description: "The run's tasks: name, status, agent, who posted it, and the start of its result.", outputSchema: ListTasksOutputSchema },
    async () => {
      let listed: Awaited<ReturnType<TaskBoard["list"]>>;
      try {
        listed = await board.list();
      } catch (error) {
        return refuse(error);
      }
      const tasks = listed.map(({ postedBy, ...task }) => ({ ...task, ...(postedBy !== undefined && { posted_by: postedBy }) }));
      const text = tasks.map((t) => `${t.name} (${t.status})${t.posted_by ? ` posted by ${t.posted_by}` : ""}${t.result ? `: ${t.result}` : ""}`);
      return { structuredContent: { tasks }, content: [{ type: "text", text: text.join("\n") || "no tasks" }] };
    },
  );

  server.registerTool(
    "wait_tasks",
    {
      description: "Wait until the named tasks have ended, and read their results.",
      inputSchema: { names: z.array(z.string().min(1)).min(1).describe("task names, e.g. those post_task returned") },
      outputSchema: WaitTasksOutputSchema,
    },
    async ({ names }, extra) => {
      try {
        const results = await board.wait(who(), names, extra.signal);
        return { structuredContent: { results }, content: [{ type: "text", text: results.map(resultLine).join("\n\n") }] };
      } catch (error) {
        return refuse(error);
      }
    },
  );
}
