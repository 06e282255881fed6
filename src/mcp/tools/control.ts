// The tools that steer a running child: interrupt_session, close_session and answer_permission.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { SessionInfoSchema } from "../session-info.ts";
import { waitSettled } from "../wait.ts";
import { infoResult, SessionIdSchema, type ToolContext } from "./common.ts";

/** How long interrupt_session waits for the interrupted turn to end. */
const INTERRUPT_WAIT_MS = 10_000;

/** interrupt_session, close_session and answer_permission: the tools that steer a running child. */
export function registerControlTools(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;

  server.registerTool(
    "interrupt_session",
    {
      title: "Interrupt a child's turn",
      description: "Stop the child's running turn. The session stays open for query_session.",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: SessionInfoSchema,
    },
    async ({ session_id }, extra) => {
      const session = registry.find(owner, session_id);
      await session.interrupt();
      await waitSettled([session], { mode: "any", timeoutMs: INTERRUPT_WAIT_MS, signal: extra.signal });
      return infoResult(session);
    },
  );

  server.registerTool(
    "close_session",
    {
      title: "Close a child session",
      description: "End the child's process. Its transcript stays readable; it cannot take further turns.",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: SessionInfoSchema,
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async ({ session_id }) => {
      const session = registry.find(owner, session_id);
      await session.close();
      return infoResult(session);
    },
  );

  server.registerTool(
    "answer_permission",
    {
      title: "Answer a child's permission request",
      description:
        "Answer a request listed under pending_permissions. A tool call: allow or deny (message says why). " +
        "A question (kind question): allow with answers, or deny to skip. " +
        "A plan (kind plan): allow approves; deny with message asks for a revision; deny with interrupt rejects it.",
      inputSchema: {
        session_id: SessionIdSchema,
        request_id: z.string().min(1).describe("From the session's pending_permissions."),
        decision: z.enum(["allow", "deny"]),
        message: z.string().optional().describe("For deny: what the child is told."),
        interrupt: z.boolean().optional().describe("With deny: also end the child's turn."),
        answers: z
          .record(z.string(), z.union([z.string(), z.array(z.string())]))
          .optional()
          .describe("For a question: question text → chosen option label (a list for multi-select)."),
      },
      outputSchema: SessionInfoSchema,
    },
    async ({ session_id, request_id, ...answer }) => {
      const session = registry.find(owner, session_id);
      session.answer(request_id, answer);
      return infoResult(session);
    },
  );
}
