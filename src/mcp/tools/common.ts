// What every MCP tool shares: the tool context, the wait schema and the shape of its results.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ManagedSession } from "../managed-session.ts";
import { renderInfo, sessionInfo } from "../session-info.ts";
import type { SessionRegistry } from "../session-registry.ts";
import { waitSettled } from "../wait.ts";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What every tool of one client connection works with. */
export interface ToolContext {
  registry: SessionRegistry;
  /** The client connection: it sees and steers only its own sessions. */
  owner: string;
  /** Agent names from the config, offered to spawn_session. */
  agents: readonly string[];
  /** Default wait of spawn_session and query_session, in seconds. */
  defaultWaitS: number;
}

/** Clients time tool calls out near 60 s; a wait must end well before. */
export const MAX_WAIT_S = 55;
/** How long spawn_session and query_session wait for the turn when the call does not say. */
export const DEFAULT_WAIT_S = 30;

export const WaitSchema = z
  .number()
  .min(0)
  .max(MAX_WAIT_S)
  .optional()
  .describe(
    `Seconds to wait for the turn to end (default ${DEFAULT_WAIT_S}, max ${MAX_WAIT_S}). If it is still running you get status "running"; use wait_sessions.`,
  );

export const SessionIdSchema = z.string().min(1).describe("The session_id spawn_session returned, or the session's name.");

export function ok(structuredContent: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent, content: [{ type: "text", text }] };
}

export function infoResult(session: ManagedSession): CallToolResult {
  const info = sessionInfo(session);
  return ok(info, renderInfo(info));
}

/** Progress notifications for a waiting call, when the client asked for them (a progressToken). */
export function progressReporter(extra: Extra): ((settled: number, total: number) => void) | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let progress = 0;
  return (settled, total) => {
    // Progress must grow with every notification; the message says what it means.
    progress++;
    void extra
      .sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress, message: `${settled} of ${total} session${total === 1 ? "" : "s"} done or waiting for you` },
      })
      .catch(() => {});
  };
}

/** Waits up to waitS for one session's turn, reporting progress. */
export async function waitForTurn(session: ManagedSession, waitS: number, extra: Extra): Promise<void> {
  await waitSettled([session], { mode: "any", timeoutMs: waitS * 1000, signal: extra.signal, onProgress: progressReporter(extra) });
}
