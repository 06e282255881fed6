// The tools that look at children: get_session, list_sessions, wait_sessions and get_transcript.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { SESSION_STATUSES, type SessionStatus } from "../../orchestrator/index.ts";
import type { ManagedSession } from "../managed-session.ts";
import { renderInfo, SessionInfoSchema, sessionInfo } from "../session-info.ts";
import { renderPage, TranscriptPageSchema, transcriptPage } from "../transcript.ts";
import { waitSettled } from "../wait.ts";
import { type Extra, infoResult, MAX_WAIT_S, ok, progressReporter, SessionIdSchema, type ToolContext } from "./common.ts";

const ListOutputSchema = z.object({
  sessions: z.array(SessionInfoSchema),
  live: z.number().describe("sessions not closed, over all clients"),
  max_sessions: z.number(),
});

const WaitOutputSchema = z.object({
  done: z.boolean().describe("false: the timeout passed first"),
  settled: z.array(z.string()).describe("ids of sessions whose turn ended or that wait for a permission answer"),
  sessions: z.array(SessionInfoSchema),
});

/** list_sessions' answer: the client's sessions (of those statuses), each without its result. */
function listResult({ registry, owner }: ToolContext, status: SessionStatus[] | undefined): CallToolResult {
  const sessions = registry.list(owner, status).map((s) => {
    const { result: _result, ...info } = sessionInfo(s);
    return info;
  });
  const text = sessions.length === 0 ? "no sessions" : sessions.map((info) => renderInfo(info).split("\n")[0]).join("\n");
  return ok({ sessions, live: registry.liveCount, max_sessions: registry.maxSessions }, text);
}

/** wait_sessions' answer, once any (or all) of the sessions settled or the timeout passed. */
async function waitResult(sessions: ManagedSession[], mode: "any" | "all", timeoutS: number, extra: Extra): Promise<CallToolResult> {
  const done = await waitSettled(sessions, { mode, timeoutMs: timeoutS * 1000, signal: extra.signal, onProgress: progressReporter(extra) });
  const infos = sessions.map(sessionInfo);
  const settled = sessions.filter((s) => s.settled).map((s) => s.id);
  const head = done
    ? `done (${mode}): ${settled.length} of ${sessions.length} settled`
    : `timed out: ${settled.length} of ${sessions.length} settled; call wait_sessions again`;
  return ok({ done, settled, sessions: infos }, [head, ...infos.map(renderInfo)].join("\n\n"));
}

/** get_session, list_sessions, wait_sessions and get_transcript: the tools that look without changing anything. */
export function registerInspectTools(server: McpServer, context: ToolContext): void {
  const { registry, owner } = context;

  server.registerTool(
    "get_session",
    {
      title: "Get a child session",
      description: "Status, last result, cost, and any permission requests waiting for answer_permission.",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: SessionInfoSchema,
      annotations: { readOnlyHint: true },
    },
    ({ session_id }) => infoResult(registry.find(owner, session_id)),
  );

  server.registerTool(
    "list_sessions",
    {
      title: "List child sessions",
      description: "Your child sessions (without their results; see get_session), optionally only those with the given statuses.",
      inputSchema: { status: z.array(z.enum(SESSION_STATUSES)).optional().describe("Only sessions with one of these statuses.") },
      outputSchema: ListOutputSchema,
      annotations: { readOnlyHint: true },
    },
    ({ status }) => listResult(context, status),
  );

  server.registerTool(
    "wait_sessions",
    {
      title: "Wait for child sessions",
      description:
        "Wait until any (or all) of the given sessions have finished their turn or need a permission answer, " +
        `for at most timeout_s (max ${MAX_WAIT_S}). Call again if done is false.`,
      inputSchema: {
        session_ids: z.array(SessionIdSchema).min(1).max(64),
        mode: z.enum(["any", "all"]).default("any").describe("any: return when one is settled; all: when every one is."),
        timeout_s: z.number().min(0).max(MAX_WAIT_S).default(30),
      },
      outputSchema: WaitOutputSchema,
      annotations: { readOnlyHint: true },
    },
    ({ session_ids, mode, timeout_s }, extra) => {
      const sessions = [...new Set(session_ids.map((id) => registry.find(owner, id)))];
      return waitResult(sessions, mode, timeout_s, extra);
    },
  );

  server.registerTool(
    "get_transcript",
    {
      title: "Read a child's transcript",
      description: "The child's messages in order, one compact entry each (tool calls and results included), in pages.",
      inputSchema: {
        session_id: SessionIdSchema,
        after: z.number().int().min(0).default(0).describe("Start at this index (a previous page's next)."),
        limit: z.number().int().min(1).max(200).default(50),
      },
      outputSchema: TranscriptPageSchema,
      annotations: { readOnlyHint: true },
    },
    async ({ session_id, after, limit }) => {
      const session = registry.find(owner, session_id);
      const page = transcriptPage(session.id, session.session.transcript(), after, limit);
      return ok(page, renderPage(page));
    },
  );
}
