import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, onTestFinished } from "vitest";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { claudeDescendants, isGone } from "./processes.ts";

export { claudeDescendants, descendants } from "./processes.ts";

import { tempHome } from "./rehearsal.ts";

export const CADRE_BIN = resolve(import.meta.dirname, "../../bin/cadre.js");

/** A private directory with a rehearsal scripts file, a work directory and a temp directory. */
export async function scriptedWorkspace(scripts: RehearsalScriptsInput): Promise<{ home: string; cwd: string; tmp: string; scriptsFile: string }> {
  const home = await tempHome("cadre-mcp-test-");
  const cwd = join(home, "work");
  const tmp = join(home, "tmp");
  await Promise.all([mkdir(cwd), mkdir(tmp)]);
  const scriptsFile = join(home, "scripts.json");
  await writeFile(scriptsFile, JSON.stringify(scripts));
  return { home, cwd, tmp, scriptsFile };
}

export interface StdioCadre {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  cwd: string;
  stderr: () => string;
}

/**
 * `cadre mcp --scripts <file>` (or, with scripts null, only `args`) as a
 * child process, with a real SDK Client on its stdio. After the test the client is closed, and neither the server nor
 * any claude it started may be left.
 */
export async function startStdioCadre(
  scripts: RehearsalScriptsInput | null,
  args: string[] = [],
  clientOptions: ConstructorParameters<typeof Client>[1] = {},
): Promise<StdioCadre> {
  const { home, cwd, tmp, scriptsFile } = await scriptedWorkspace(scripts ?? {});
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CADRE_BIN, "mcp", ...(scripts ? ["--scripts", scriptsFile] : []), ...args],
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const client = new Client({ name: "cadre-test", version: "1.0.0" }, clientOptions);
  await client.connect(transport);
  const pid = transport.pid!;
  onTestFinished(async () => {
    const children = await claudeDescendants(pid);
    await client.close();
    expect(await isGone(pid, 10_000), `cadre mcp (pid ${pid}) is still running`).toBe(true);
    for (const child of children) expect(await isGone(child, 5_000), `claude pid ${child} survived its server`).toBe(true);
  });
  return { client, transport, pid, cwd, stderr: () => stderr };
}

export type ToolResult = CallToolResult & { structuredContent?: Record<string, any> };

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client["callTool"]>[2] = {},
): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...options })) as ToolResult;
}

export function textOf(result: ToolResult): string {
  return (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
}
