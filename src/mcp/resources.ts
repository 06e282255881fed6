import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { sessionInfo } from "./session-info.ts";
import type { SessionRegistry } from "./session-registry.ts";
import { renderPage, transcriptPage } from "./transcript.ts";

export const SESSIONS_URI = "cadre://sessions";
export const TRANSCRIPT_TEMPLATE = "cadre://sessions/{id}/transcript";

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
      const session = registry.find(owner, id);
      const page = transcriptPage(session.id, session.session.transcript(), 0, MAX_RESOURCE_ENTRIES, MAX_RESOURCE_CHARS);
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: renderPage(page) }] };
    },
  );
}
