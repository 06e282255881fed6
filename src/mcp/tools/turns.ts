// The tools that start turns: spawn_session and query_session.
import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EffortLevelSchema } from "../../protocol/index.ts";
import { NoTurnRunningError, PERMISSION_MODES } from "../../worker/index.ts";
import { InvalidArgumentError, SessionBusyError } from "../errors.ts";
import type { ManagedSession } from "../managed-session.ts";
import { SessionInfoSchema } from "../session-info.ts";
import { infoResult, SessionIdSchema, type ToolContext, WaitSchema, waitForTurn } from "./common.ts";

/** A working directory the child can start in; relative paths are taken from the server's directory. */
function checkedCwd(cwd: string): string {
  const path = isAbsolute(cwd) ? cwd : resolve(cwd);
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new InvalidArgumentError(`cwd "${path}" is not an existing directory; give an absolute path to one, or leave cwd out.`);
  return path;
}

/** A message for a working child goes into its running turn; a turn that has not started or is ending cannot take it. */
function steerOrRefuse(session: ManagedSession, prompt: string): void {
  try {
    session.steer(prompt);
  } catch (error) {
    if (!(error instanceof NoTurnRunningError)) throw error;
    throw new SessionBusyError(session.id, session.status);
  }
}

/** spawn_session and query_session: the tools that start a turn. */
export function registerTurnTools(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;
  const spawnShape = {
    prompt: z.string().min(1).describe("The child's first message. Include everything it needs: it sees nothing of your conversation."),
    name: z.string().min(1).max(64).optional().describe("A short unique label, usable instead of session_id."),
    model: z.string().min(1).optional().describe('Model alias or id, e.g. "sonnet".'),
    cwd: z.string().min(1).optional().describe("Working directory (absolute path). Default: the server's."),
    append_system_prompt: z.string().optional().describe("Text added to the child's system prompt."),
    allowed_tools: z.array(z.string().min(1)).optional().describe('Tools it may use without asking, e.g. ["Read", "Bash(git diff:*)"].'),
    permission_mode: z.enum(PERMISSION_MODES).optional().describe("Default: tools not allowed wait for your answer_permission."),
    effort: EffortLevelSchema.optional().describe("How hard the child works: low, medium, high, xhigh, max. Default: the CLI's."),
    wait_s: WaitSchema,
  };
  // Only a server with configured agents offers the agent field (tool definitions cost the parent context).
  const agentShape =
    context.agents.length > 0
      ? {
          agent: z
            .enum(context.agents as [string, ...string[]])
            .optional()
            .describe("Run the child as this configured agent (its prompt, tools and model)."),
        }
      : {};

  server.registerTool(
    "spawn_session",
    {
      title: "Spawn a child Claude session",
      description:
        "Start a child Claude Code session on a task and return when its first turn ends or after wait_s. " +
        "The child keeps its conversation: send follow-ups with query_session, close it with close_session when done. " +
        "Tool calls it may not make on its own wait for you (status awaiting_permission; see answer_permission).",
      // The agent field's type varies with the config; its value is read below.
      inputSchema: { ...spawnShape, ...agentShape } as typeof spawnShape,
      outputSchema: SessionInfoSchema,
    },
    async (args, extra) => {
      const a = args as typeof args & { agent?: string };
      const session = registry.open(owner, {
        name: a.name,
        agent: a.agent,
        model: a.model,
        cwd: a.cwd === undefined ? undefined : checkedCwd(a.cwd),
        appendSystemPrompt: a.append_system_prompt,
        allowedTools: a.allowed_tools,
        permissionMode: a.permission_mode,
        ...(a.effort !== undefined && { worker: { effort: a.effort } }),
      });
      session.send(a.prompt);
      await waitForTurn(session, a.wait_s ?? context.defaultWaitS, extra);
      // The first child found that none can run: a tool error that says why, not a child that failed.
      registry.throwIfRefused();
      return infoResult(session);
    },
  );
  registerQuerySession(server, context);
}

/** query_session: a message to a child, as a new turn, or into the turn it is working on. */
function registerQuerySession(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;
  server.registerTool(
    "query_session",
    {
      title: "Send a message to a child",
      description:
        "Send a message to a child session and return when its turn ends or after wait_s. A child that is idle starts a turn with it; " +
        "a child that is working takes it into its running turn at its next step (between tool calls), and that turn's result is its answer after it.",
      inputSchema: {
        session_id: SessionIdSchema,
        prompt: z.string().min(1).describe("The message."),
        wait_s: WaitSchema,
      },
      outputSchema: SessionInfoSchema,
    },
    async ({ session_id, prompt, wait_s }, extra) => {
      const session = registry.find(owner, session_id);
      registry.throwIfRefused();
      if (session.busy) steerOrRefuse(session, prompt);
      else session.send(prompt);
      await waitForTurn(session, wait_s ?? context.defaultWaitS, extra);
      registry.throwIfRefused();
      return infoResult(session);
    },
  );
}
