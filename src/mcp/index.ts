/** The MCP server (`cadre mcp`): its runtime over one Orchestrator and its transports. */
export type { HttpServing } from "./http.ts";
export type { McpRuntimeOptions } from "./runtime.ts";
export { McpRuntime } from "./runtime.ts";
