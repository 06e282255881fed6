// post_task, list_tasks and wait_tasks over MCP: the SDK's real Client against a server with the task tools, on a board that keeps posts in memory.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it, onTestFinished } from "vitest";
import { MAX_POSTED_PROMPT_BYTES, type TaskBoard, type TaskPost } from "../../../src/orchestrator/index.ts";
import { registerTaskTools, TASK_TOOL_NAMES } from "../../../src/orchestrator/peers/task-tools.ts";

/** A board that takes any post under the limit, as the run's does, and refuses the rest with its words. */
function boardOf(posts: [string, TaskPost][]): TaskBoard {
  return {
    post: async (poster, post) => {
      if (Buffer.byteLength(post.prompt) > MAX_POSTED_PROMPT_BYTES) throw new Error("refused: the prompt is too long");
      posts.push([poster, post]);
      return { name: post.name ?? "task-1", existed: false };
    },
    list: () => posts.map(([poster, post]) => ({ name: post.name ?? "task-1", status: "pending", postedBy: poster })),
    wait: async (_waiter, names) => names.map((name) => ({ name, status: "succeeded", text: `${name} done` })),
  };
}

async function connect(board: TaskBoard): Promise<Client> {
  const server = new McpServer({ name: "cadre", version: "1.0.0" });
  registerTaskTools(server, () => "lead", board);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "task-tools-test", version: "1.0.0" });
  await client.connect(clientSide);
  onTestFinished(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("the task tools", () => {
  it("tell the model how long a posted prompt may be, in the schema it reads", async () => {
    const { tools } = await (await connect(boardOf([]))).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TASK_TOOL_NAMES].sort());
    const prompt = tools.find((tool) => tool.name === "post_task")?.inputSchema.properties?.prompt as { description?: string };
    expect(prompt.description).toContain(`at most ${MAX_POSTED_PROMPT_BYTES / 1024} KB`);
  });

  it("post for the task whose worker calls, and give the board's refusal to the model as a tool error", async () => {
    const posts: [string, TaskPost][] = [];
    const client = await connect(boardOf(posts));
    const posted = (await client.callTool({ name: "post_task", arguments: { prompt: "fix a", name: "fix-a" } })) as CallToolResult;
    expect([posted.isError, textOf(posted)]).toEqual([undefined, "posted fix-a"]);
    expect(posts).toEqual([["lead", { prompt: "fix a", name: "fix-a", agent: undefined, dependsOn: undefined }]]);
    const long = "x".repeat(MAX_POSTED_PROMPT_BYTES + 1);
    const refused = (await client.callTool({ name: "post_task", arguments: { prompt: long } })) as CallToolResult;
    expect([refused.isError, textOf(refused)]).toEqual([true, "refused: the prompt is too long"]);
    const listed = (await client.callTool({ name: "list_tasks", arguments: {} })) as CallToolResult;
    expect(textOf(listed)).toBe("fix-a (pending) posted by lead");
  });
});
