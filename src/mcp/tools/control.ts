import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { PendingPermission } from "../../orchestrator/session.ts";
import { askUserQuestion, type PermissionDecision, planReview } from "../../worker/index.ts";
import { InvalidArgumentError, UnknownPermissionRequestError } from "../errors.ts";
import { SessionInfoSchema } from "../session-info.ts";
import { waitSettled } from "../wait.ts";
import { guarded, infoResult, SessionIdSchema, type ToolContext } from "./common.ts";

/** How long interrupt_session waits for the interrupted turn to end. */
const INTERRUPT_WAIT_MS = 10_000;

export interface Answer {
  decision: "allow" | "deny";
  message?: string;
  interrupt?: boolean;
  answers?: Record<string, string | string[]>;
}

/** The decision an answer means for this kind of request (a tool call, AskUserQuestion, ExitPlanMode). */
export function decisionFor(pending: PendingPermission, answer: Answer): PermissionDecision {
  if (pending.kind === "question") {
    if (answer.decision === "deny") return askUserQuestion.skip(answer.message);
    if (!answer.answers || Object.keys(answer.answers).length === 0) {
      const questions = askUserQuestion
        .questions(pending)
        .map((q) => `"${q.question}"`)
        .join(", ");
      throw new InvalidArgumentError(`This request is a question: give answers keyed by question text (${questions}), or deny to skip it.`);
    }
    try {
      return askUserQuestion.answer(pending, answer.answers);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  }
  if (pending.kind === "plan") {
    if (answer.decision === "allow") return planReview.approve();
    return answer.interrupt ? planReview.reject(answer.message) : planReview.revise(answer.message ?? "Revise the plan.");
  }
  if (answer.decision === "allow") return { behavior: "allow" };
  return { behavior: "deny", message: answer.message ?? "The parent session denied this tool call.", ...(answer.interrupt && { interrupt: true }) };
}

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
    ({ session_id }, extra) =>
      guarded(async () => {
        const session = registry.find(owner, session_id);
        await session.interrupt();
        await waitSettled([session], { mode: "any", timeoutMs: INTERRUPT_WAIT_MS, signal: extra.signal });
        return infoResult(session);
      }),
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
    ({ session_id }) =>
      guarded(async () => {
        const session = registry.find(owner, session_id);
        await session.close();
        return infoResult(session);
      }),
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
    ({ session_id, request_id, ...answer }) =>
      guarded(() => {
        const session = registry.find(owner, session_id);
        const pending = session.pending;
        const request = pending.find((p) => p.requestId === request_id);
        if (!request)
          throw new UnknownPermissionRequestError(
            session.id,
            request_id,
            pending.map((p) => p.requestId),
          );
        session.session.answerPermission(request_id, decisionFor(request, answer));
        session.changed();
        return infoResult(session);
      }),
  );
}
