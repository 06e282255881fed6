// `cadre mcp --demo`: a scripted parent Claude uses `cadre mcp --rehearse` through its MCP tools, offline, and shows each call.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { CliMessage, ContentBlock } from "../protocol/index.ts";
import { offlineClaudeEnv, type RehearsalScriptsInput, startRehearsalServer } from "../rehearsal/index.ts";
import { cadreRoot } from "../util/package-root.ts";
import { removeOnExit } from "../util/reaper.ts";
import { locateClaude, Worker } from "../worker/index.ts";
import { mcpAddLine } from "./setup-lines.ts";
import { SIGNAL_EXIT_CODES, stopOnSignals } from "./signals.ts";

/** What the parent's scripted model does: the calls a person would ask their Claude to make. */
const PARENT: RehearsalScriptsInput = {
  parent: [
    { tool_use: { name: "mcp__cadre__spawn_session", input: { name: "helper", prompt: "What is the capital of France?" } } },
    { tool_use: { name: "mcp__cadre__query_session", input: { session_id: "helper", prompt: "And of Italy?" } } },
    { tool_use: { name: "mcp__cadre__close_session", input: { session_id: "helper" } } },
    { text: "The helper answered both questions, and is closed." },
  ],
};

const TOOLS = ["spawn_session", "query_session", "close_session"].map((tool) => `mcp__cadre__${tool}`);

/** The longest tool result shown whole; a longer one is cut, with a note. */
const SHOWN_CHARS = 600;

/** How the parent's CLI starts this same cadre as its MCP server: Node's bin, or Deno's. */
function cadreMcpCommand(root: string): { command: string; args: string[] } {
  const rehearse = ["mcp", "--rehearse"];
  if (process.versions.deno !== undefined) {
    return { command: process.execPath, args: ["run", "-A", "--config", join(root, "deno.json"), join(root, "bin", "cadre-deno.ts"), ...rehearse] };
  }
  return { command: process.execPath, args: [join(root, "bin", "cadre.js"), ...rehearse] };
}

function indented(text: string): string {
  const shown = text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}… (${text.length - SHOWN_CHARS} more characters)` : text;
  return shown.replaceAll("\n", "\n    ");
}

function resultText(block: ContentBlock & { type: "tool_result" }): string {
  const content = block.content;
  if (typeof content === "string") return content;
  return (content ?? []).map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** A tool's answer: a session's state and its child's last words when it is one, else the text as it came. */
function toolAnswer(text: string, isError: boolean): string {
  if (isError) return `cadre answers with an error:\n    ${indented(text)}`;
  let session: { name?: unknown; status?: unknown; turns?: unknown; result?: unknown } | undefined;
  try {
    session = JSON.parse(text) as typeof session;
  } catch {
    // Not a session: shown as it came.
  }
  if (typeof session?.name !== "string" || typeof session.result !== "string") return `cadre answers:\n    ${indented(text)}`;
  return `cadre answers: session ${session.name} is ${String(session.status)} after ${String(session.turns)} turn(s); the child's last answer:\n    ${indented(session.result)}`;
}

/** The lines one message of the parent's CLI adds to the story: its tool calls, what they returned, its last words. */
function describe(message: CliMessage): string[] {
  if (message.type === "assistant") {
    return message.message.content.flatMap((block) => {
      if (block.type === "tool_use") return [`parent calls ${block.name.replace("mcp__cadre__", "")} ${JSON.stringify(block.input)}`];
      if (block.type === "text") return [`parent says: ${block.text}`];
      return [];
    });
  }
  if (message.type === "user" && Array.isArray(message.message.content)) {
    return message.message.content.flatMap((block) => (block.type === "tool_result" ? [toolAnswer(resultText(block), block.is_error === true)] : []));
  }
  return [];
}

/** Runs the demo; 0 when the parent's turn ended well, 1 otherwise, 128 + the signal that stopped it. */
export async function mcpDemo(): Promise<number> {
  const root = cadreRoot();
  if (root === undefined) {
    process.stderr.write("cadre mcp --demo: runs from cadre's files (a clone or an installed package), not from a URL\n");
    return 2;
  }
  const stop = stopOnSignals("the demo");
  const server = await startRehearsalServer({ scripts: PARENT });
  const home = await mkdtemp(join(tmpdir(), "cadre-mcp-demo-"));
  const removed = removeOnExit(home);
  let parent: Worker | undefined;
  try {
    const cwd = join(home, "work");
    await mkdir(cwd);
    process.stdout.write(`A scripted parent Claude (${locateClaude()}) with cadre mcp --rehearse as its MCP server; no account, no network.\n`);
    parent = await Worker.start(
      {
        cwd,
        inheritEnv: false,
        env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("parent"), home }),
        mcpServers: { cadre: cadreMcpCommand(root) },
        strictMcpConfig: true,
        allowedTools: TOOLS,
        settingSources: [],
        persistSession: false,
      },
      stop.signal,
    );
    const turn = parent.send("Ask a helper session two questions through cadre.", { signal: stop.signal });
    for await (const message of turn) for (const line of describe(message)) process.stdout.write(`${line}\n`);
    const result = turn.lastResult;
    if (result === undefined || result.is_error) throw new Error(`the parent's turn failed: ${result?.result ?? "no result"}`);
    process.stdout.write(`\nThat was cadre's MCP server. To give your own Claude Code these tools:\n  ${mcpAddLine()}\n`);
    return 0;
  } catch (error) {
    // Stopped by Ctrl-C (or SIGTERM, SIGHUP): nothing failed, and the shell's code says which.
    if (stop.received !== undefined) return SIGNAL_EXIT_CODES[stop.received];
    process.stderr.write(`cadre mcp --demo: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await parent?.close();
    await server.close();
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
    removed();
    stop.dispose();
  }
}
