// The MCP resources: the sessions, and each session's transcript.
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { UnknownSessionError } from "./errors.ts";
import type { ManagedSession } from "./managed-session.ts";
import { sessionInfo } from "./session-info.ts";
import type { SessionRegistry } from "./session-registry.ts";
import { renderPage, transcriptPage } from "./transcript.ts";

export const SESSIONS_URI = "cadre://sessions";
export const TRANSCRIPT_TEMPLATE = "cadre://sessions/{id}/transcript";

/** MCP's error code for a resource that does not exist (the SDK has no name for it). */
const RESOURCE_NOT_FOUND = -32002;

/** A resource read may be larger than a tool result, but still bounded. */
const MAX_RESOURCE_CHARS = 200_000;
const MAX_RESOURCE_ENTRIES = 5_000;

export function transcriptUri(id: string): string {
  return `cadre://sessions/${encodeURIComponent(id)}/transcript`;
}

/** The session list and one transcript per session, for clients that read resources. */
export function registerResources(server: McpServer, registry: SessionRegistry, owner: string): void {
  server.registerResource(
    "sessions",
    SESSIONS_URI,
    { title: "Child sessions", description: "Every child session of this client with its status", mimeType: "application/json" },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(registry.list(owner).map(sessionInfo), null, 2) }],
    }),
  );

  server.registerResource(
    "transcript",
    new ResourceTemplate(TRANSCRIPT_TEMPLATE, {
      list: () => ({
        resources: registry.list(owner).map((s) => ({
          uri: transcriptUri(s.id),
          name: `transcript of ${s.name}`,
          mimeType: "text/plain",
        })),
      }),
    }),
    { title: "Child transcript", description: "A child session's messages, one compact entry each", mimeType: "text/plain" },
    (uri, variables) => {
      const id = decodeURIComponent(String(variables.id));
      let session: ManagedSession;
      try {
        session = registry.find(owner, id);
      } catch (error) {
        if (error instanceof UnknownSessionError) throw new McpError(RESOURCE_NOT_FOUND, error.message, { uri: uri.href });
        throw error;
      }
      const page = transcriptPage(session.id, session.session.transcript(), 0, MAX_RESOURCE_ENTRIES, MAX_RESOURCE_CHARS);
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: renderPage(page) }] };
    },
  );
}
