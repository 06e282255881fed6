// `cadre mcp` over stdio: serves one client on this process's stdin and stdout.
import process from "node:process";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { McpRuntime } from "./runtime.ts";

export const STDIO_OWNER = "stdio";

/**
 * Serves one client over this process's stdin and stdout. Resolves when the
 * client goes (stdin ends or the transport closes) or `stop` aborts; the
 * client's sessions are closed by then.
 */
export async function serveStdio(runtime: McpRuntime, stop: AbortSignal): Promise<void> {
  const server = runtime.createServer(STDIO_OWNER);
  const transport = new StdioServerTransport();
  const gone = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
    if (stop.aborted) resolve();
    else stop.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.connect(transport);
  await gone;
  await runtime.registry.closeOwner(STDIO_OWNER);
  await server.close().catch(() => {});
  // Nothing more will be read; a paused stdin would keep the process alive.
  process.stdin.destroy();
}
