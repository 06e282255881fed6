// The MCP server's log to its client: each child's start, turns, permission requests, failures and close.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { oneLine } from "../util/one-line.ts";
import type { ManagedSession } from "./managed-session.ts";
import type { ChildActivity, SessionRegistry } from "./session-registry.ts";

/** The `logger` of every message cadre sends. */
export const LOGGER = "cadre";

export interface ChildLogEntry {
  level: LoggingLevel;
  /** started, turn_ended, turn_failed, permission_asked, failed, closed. */
  event: string;
  message: string;
}

/** What a child's activity is worth telling its parent, at which levels: none, one or two entries. */
export function logEntriesFor(activity: ChildActivity): ChildLogEntry[] {
  const { session } = activity;
  const who = session.name === session.id ? `child ${session.id}` : `child ${session.name} (${session.id})`;
  const failure = () => (session.error ? `: ${oneLine(session.error.message)}` : "");
  if (activity.kind === "permission") {
    return [{ level: "notice", event: "permission_asked", message: `${who} asks permission for ${activity.pending.toolName}` }];
  }
  const started: ChildLogEntry[] = activity.before === "starting" ? [{ level: "info", event: "started", message: `${who} started` }] : [];
  switch (session.status) {
    case "failed":
      return [{ level: "error", event: "failed", message: `${who} failed${failure()}` }];
    case "closed":
      return [{ level: "debug", event: "closed", message: `${who} closed${session.closedReason ? ` (${session.closedReason})` : ""}` }];
    case "idle":
      // A quick turn may end before its start was seen: both are told.
      if (session.error) return [...started, { level: "error", event: "turn_failed", message: `${who}: its turn failed${failure()}` }];
      return session.result ? [...started, { level: "info", event: "turn_ended", message: `${who}: its turn ended` }] : started;
    default:
      return started;
  }
}

function dataOf(session: ManagedSession, entry: ChildLogEntry): Record<string, unknown> {
  return { message: entry.message, event: entry.event, session: session.id, name: session.name, status: session.status };
}

/**
 * Sends the owner's children's notable events to the client as MCP log
 * messages (`notifications/message`), at or above the level the client set
 * with `logging/setLevel` (the SDK keeps it per MCP session). Returns the
 * unsubscribe function.
 */
export function forwardChildLog(server: McpServer, registry: SessionRegistry, owner: string): () => void {
  return registry.onActivity(owner, (activity) => {
    if (!server.isConnected()) return;
    for (const entry of logEntriesFor(activity)) {
      const params = { level: entry.level, logger: LOGGER, data: dataOf(activity.session, entry) };
      // A client that left while its children end: nothing to tell, nobody to tell it to.
      server.sendLoggingMessage(params, server.server.transport?.sessionId).catch(() => {});
    }
  });
}
