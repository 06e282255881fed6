// Asks the client's user about a child's permission request through MCP elicitation, when the client offers it.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { PendingPermission } from "../orchestrator/index.ts";
import type { ElicitationAnswer, ElicitationRequest } from "../protocol/index.ts";
import { clip } from "../util/one-line.ts";
import { askUserQuestion, planReview } from "../worker/index.ts";
import { type Answer, decisionFor } from "./answer.ts";
import type { ManagedSession } from "./managed-session.ts";

/**
 * Asks the client's user about a child's permission request through MCP
 * elicitation, when the client supports it. An accepted form answers the
 * request, a decline denies it; a cancel or a failure hands it to the parent,
 * whose answer_permission it then waits for (and for its time limit). While
 * the user decides, the parent's spawn_session and wait_sessions keep waiting.
 */

type Form = Pick<ElicitRequestFormParams, "message" | "requestedSchema">;

function formFor(session: ManagedSession, pending: PendingPermission): Form {
  const who = `Child session ${session.id}${session.name.startsWith("task-") ? "" : ` (${session.name})`}`;
  if (pending.kind === "question") {
    const questions = askUserQuestion.questions(pending);
    const properties = Object.fromEntries(
      questions.map((q, i) => [
        `q${i}`,
        q.multiSelect
          ? { type: "array" as const, title: q.question, items: { type: "string" as const, enum: q.options.map((o) => o.label) } }
          : { type: "string" as const, title: q.question, enum: q.options.map((o) => o.label) },
      ]),
    );
    return { message: `${who} asks:`, requestedSchema: { type: "object", properties, required: Object.keys(properties) } };
  }
  if (pending.kind === "plan") {
    return {
      message: `${who} asks you to approve its plan:\n\n${clip(planReview.plan(pending) ?? "(the plan is in the child's plan file)", 8_000)}`,
      requestedSchema: {
        type: "object",
        properties: {
          decision: { type: "string", title: "Decision", enum: ["approve", "revise", "reject"] },
          message: { type: "string", title: "Feedback for the child" },
        },
        required: ["decision"],
      },
    };
  }
  return {
    message: `${who} wants to use ${pending.toolName}:\n${clip(JSON.stringify(pending.input, null, 2), 4_000)}`,
    requestedSchema: {
      type: "object",
      properties: {
        decision: { type: "string", title: "Allow this call?", enum: ["allow", "deny"] },
        message: { type: "string", title: "Reason (told to the child on deny)" },
      },
      required: ["decision"],
    },
  };
}

function answerFrom(pending: PendingPermission, content: NonNullable<ElicitResult["content"]>): Answer {
  const message = typeof content.message === "string" && content.message !== "" ? content.message : undefined;
  if (pending.kind === "question") {
    const questions = askUserQuestion.questions(pending);
    const answers = Object.fromEntries(
      questions.flatMap((q, i) => {
        const value = content[`q${i}`];
        return typeof value === "string" || Array.isArray(value) ? [[q.question, value as string | string[]]] : [];
      }),
    );
    return { decision: "allow", answers };
  }
  if (pending.kind === "plan") {
    const choice = content.decision;
    if (choice === "approve") return { decision: "allow" };
    return { decision: "deny", message, interrupt: choice === "reject" };
  }
  return { decision: content.decision === "allow" ? "allow" : "deny", message };
}

export function supportsElicitation(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation?.form !== undefined;
}

/** Asks; the question is withdrawn once the request is answered some other way or times out. */
export async function askByElicitation(server: Server, session: ManagedSession, pending: PendingPermission, timeoutMs: number): Promise<void> {
  // Synchronously, before anyone is told of the request: the parent's waits go on while the user decides.
  const handBack = session.askUser(pending.requestId);
  const withdrawn = new AbortController();
  const stillPending = () => session.pending.some((p) => p.requestId === pending.requestId);
  const off = session.onChange(() => {
    if (!stillPending()) withdrawn.abort();
  });
  try {
    const result = await server.elicitInput({ mode: "form", ...formFor(session, pending) }, { signal: withdrawn.signal, timeout: timeoutMs });
    if (!stillPending()) return;
    if (result.action === "accept" && result.content) {
      session.session.answerPermission(pending.requestId, decisionFor(pending, answerFrom(pending, result.content)));
    } else if (result.action === "decline") {
      session.session.answerPermission(pending.requestId, { behavior: "deny", message: "The user declined this request." });
    }
  } catch {
    // Cancelled, timed out, or the client failed: the request keeps waiting for answer_permission.
  } finally {
    off();
    handBack();
  }
}

/**
 * What an MCP server of a child asks, asked of the client's user through MCP
 * elicitation (a form, or a URL to open), naming the child and the server. A
 * client without elicitation, or a failure, declines: the server is told, the
 * child goes on.
 */
export async function forwardElicitation(
  server: Server,
  session: ManagedSession,
  request: ElicitationRequest,
  signal: AbortSignal,
): Promise<ElicitationAnswer> {
  const who = `Child session ${session.id}${session.name.startsWith("task-") ? "" : ` (${session.name})`}, MCP server ${request.mcp_server_name}`;
  const url = request.mode === "url" && request.url !== undefined;
  if (!(url ? server.getClientCapabilities()?.elicitation?.url !== undefined : supportsElicitation(server))) return { action: "decline" };
  try {
    const result = url
      ? await server.elicitInput(
          { mode: "url", message: `${who}: ${request.message}`, url: request.url!, elicitationId: request.elicitation_id ?? "" },
          { signal },
        )
      : await server.elicitInput(
          {
            mode: "form",
            message: `${who} asks: ${request.message}`,
            requestedSchema: (request.requested_schema ?? { type: "object", properties: {} }) as ElicitRequestFormParams["requestedSchema"],
          },
          { signal },
        );
    return { action: result.action, ...(result.content !== undefined && { content: result.content }) };
  } catch {
    return { action: "decline" };
  }
}
