// One MCP server for one client connection: the tools, resources and logging over the shared session registry.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CADRE_VERSION } from "../util/version.ts";
import { askByElicitation, forwardElicitation, supportsElicitation } from "./elicitation.ts";
import { forwardChildLog } from "./logging.ts";
import { registerResources } from "./resources.ts";
import type { SessionRegistry } from "./session-registry.ts";
import { registerBackgroundTools } from "./tools/background.ts";
import { DEFAULT_WAIT_S } from "./tools/common.ts";
import { registerControlTools } from "./tools/control.ts";
import { registerFileTools } from "./tools/files.ts";
import { registerInspectTools } from "./tools/inspect.ts";
import { registerProcessTools } from "./tools/process.ts";
import { registerTurnTools } from "./tools/turns.ts";
import { registerWorkflowTools } from "./tools/workflows.ts";
import type { WorkflowRuns } from "./workflow-runs.ts";

export interface CadreServerOptions {
  /** Agent names a child may run as (from the config). */
  agents?: readonly string[];
  /** Default wait of spawn_session and query_session, in seconds. Default 30. */
  defaultWaitS?: number;
  /** Ask the client's user through MCP elicitation when it supports it. Default true. */
  elicitation?: boolean;
  /** The workflow scripts run_workflow starts; without it the workflow tools are not offered. */
  workflows?: WorkflowRuns;
}

/**
 * The cadre MCP server for one client connection (an McpServer serves one
 * transport): the session tools and resources over the shared registry,
 * scoped to `owner`, and its children's notable events as log messages.
 */
export function createCadreServer(registry: SessionRegistry, owner: string, options: CadreServerOptions = {}): McpServer {
  const server = new McpServer(
    { name: "cadre", version: CADRE_VERSION },
    {
      // The children's notable events, as log messages the client filters with logging/setLevel.
      capabilities: { logging: {} },
      instructions:
        "Run child Claude Code sessions: spawn_session starts one on a task, query_session continues it, " +
        "wait_sessions waits on several; answer their permission requests with answer_permission; close_session when done. " +
        "run_workflow runs a workflow script (Claude Code's dialect) on cadre's fleet; get_workflow gives its result.",
    },
  );
  const context = { registry, owner, agents: options.agents ?? [], defaultWaitS: options.defaultWaitS ?? DEFAULT_WAIT_S };
  registerTurnTools(server, context);
  registerInspectTools(server, context);
  registerControlTools(server, context);
  registerBackgroundTools(server, context);
  registerFileTools(server, context);
  registerProcessTools(server, context);
  if (options.workflows) registerWorkflowTools(server, context, options.workflows);
  registerResources(server, registry, owner);
  const stopLogging = forwardChildLog(server, registry, owner);
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    stopLogging();
    onclose?.();
  };
  if (options.elicitation !== false) {
    registry.onPermissionRequest(owner, (session, pending) => {
      if (supportsElicitation(server.server)) void askByElicitation(server.server, session, pending, registry.permissionTimeoutMs);
    });
    registry.onElicitation(owner, (session, request, signal) => forwardElicitation(server.server, session, request, signal));
  }
  return server;
}
