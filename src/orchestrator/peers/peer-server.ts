/**
 * The built-in "cadre" MCP server every worker gets: its model reaches the other
 * workers through these tools (mcp__cadre__ask_peer, …). The tools only translate
 * between MCP and the PeerDirectory; refusals come back as tool errors
 * (`isError: true`) worded for the model, never as protocol errors.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { formatChain } from "./chain.ts";
import type { Caller, PeerDirectory } from "./directory.ts";

/** The name workers know the server under: tools reach the model as mcp__cadre__<tool>. */
export const PEER_SERVER_NAME = "cadre";

export const PEER_TOOL_NAMES = ["list_peers", "ask_peer", "tell_peer", "read_inbox", "spawn_worker"] as const;

/** The tools as the model sees them, e.g. for a worker's allowedTools (MCP tools otherwise need a permission). */
export const PEER_TOOL_IDS = PEER_TOOL_NAMES.map((name) => `mcp__${PEER_SERVER_NAME}__${name}`);

// Output schemas: the structuredContent of each tool. We build these objects
// ourselves, so strict objects are right here (the JSON Schema tells clients exactly what comes).
export const ListPeersOutputSchema = z.object({
  peers: z.array(z.object({ name: z.string(), description: z.string(), status: z.string() })),
});
export const AskPeerOutputSchema = z.object({ peer: z.string(), answer: z.string() });
export const TellPeerOutputSchema = z.object({ delivered: z.literal(true) });
export const ReadInboxOutputSchema = z.object({
  messages: z.array(z.object({ from: z.string(), text: z.string(), at: z.number().describe("epoch ms") })),
});
export const SpawnWorkerOutputSchema = z.object({ task_id: z.string(), answer: z.string(), cost_usd: z.number() });

function ok(structuredContent: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent, content: [{ type: "text", text }] };
}

function refuse(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Why the caller may not message `peer`, or undefined when it may. */
function unreachable(directory: PeerDirectory, caller: Caller, peer: string): string | undefined {
  if (peer === caller.name) return `"${peer}" is you; peers are the other workers (see list_peers)`;
  if (directory.canReach(caller, peer)) return undefined;
  const reachable = directory.listPeers(caller).map((p) => p.name);
  const known = `Peers you can reach: ${reachable.join(", ") || "none"}.`;
  if (directory.isPeer === undefined) return `no peer "${peer}" you can reach. ${known}`;
  if (directory.isPeer(peer)) return `"${peer}" exists, but this swarm's connections do not let "${caller.name}" reach it. ${known}`;
  return `unknown peer "${peer}". ${known}`;
}

function listPeers(directory: PeerDirectory, who: Caller): CallToolResult {
  const peers = directory.listPeers(who).map(({ name, description, status }) => ({ name, description, status }));
  const text = peers.length === 0 ? "no peers you can reach" : peers.map((p) => `${p.name} (${p.status}): ${p.description}`).join("\n");
  return ok({ peers }, text);
}

async function askPeer(directory: PeerDirectory, who: Caller, peer: string, question: string, signal: AbortSignal): Promise<CallToolResult> {
  if (peer !== who.name && who.waitChain.includes(peer)) {
    // Waiting on a worker that waits on us would never end.
    const cycle = formatChain([...who.waitChain, who.name], peer);
    return refuse(`cycle: ${cycle}: ${peer} is waiting on you; answer from what you know instead`);
  }
  const refusal = unreachable(directory, who, peer);
  if (refusal) return refuse(refusal);
  try {
    const answer = await directory.ask(who, peer, question, signal);
    return ok({ peer, answer }, answer);
  } catch (error) {
    return refuse(`ask_peer "${peer}" failed: ${messageOf(error)}`);
  }
}

async function tellPeer(directory: PeerDirectory, who: Caller, peer: string, message: string): Promise<CallToolResult> {
  const refusal = unreachable(directory, who, peer);
  if (refusal) return refuse(refusal);
  try {
    await directory.tell(who, peer, message);
  } catch (error) {
    return refuse(`tell_peer "${peer}" failed: ${messageOf(error)}`);
  }
  return ok({ delivered: true }, `delivered to ${peer}`);
}

/** `caller` is asked inside the try: a failure to say who calls is the tool's failure too. */
async function readInbox(directory: PeerDirectory, caller: () => Caller): Promise<CallToolResult> {
  let messages: { from: string; text: string; at: number }[];
  try {
    messages = (await directory.readInbox(caller())).map(({ from, text, at }) => ({ from, text, at }));
  } catch (error) {
    return refuse(`read_inbox failed: ${messageOf(error)}`);
  }
  const text = messages.length === 0 ? "no new messages" : messages.map((m) => `[${new Date(m.at).toISOString()}] ${m.from}: ${m.text}`).join("\n");
  return ok({ messages }, text);
}

/**
 * A fresh McpServer for one worker (an McpServer serves one transport).
 * `caller` is asked on every tool call, because who waits on the worker
 * changes from turn to turn.
 */
export function createPeerServer(caller: () => Caller, directory: PeerDirectory): McpServer {
  const server = new McpServer({ name: PEER_SERVER_NAME, version: "1.0.0" });

  server.registerTool(
    "list_peers",
    {
      description: "List the workers you can reach with ask_peer/tell_peer: name, what each does, status.",
      outputSchema: ListPeersOutputSchema,
    },
    async () => listPeers(directory, caller()),
  );

  server.registerTool(
    "ask_peer",
    {
      description:
        "Ask another worker a question and wait for its answer. Use when you need something only that peer knows or can do. " +
        "The peer does not see your conversation: make the question self-contained.",
      inputSchema: { peer: z.string().min(1).describe("peer name from list_peers"), question: z.string().min(1) },
      outputSchema: AskPeerOutputSchema,
    },
    ({ peer, question }, extra) => askPeer(directory, caller(), peer, question, extra.signal),
  );

  server.registerTool(
    "tell_peer",
    {
      description: "Leave a message in another worker's inbox without waiting (it reads it with read_inbox). Use for notes, not questions.",
      inputSchema: { peer: z.string().min(1).describe("peer name from list_peers"), message: z.string().min(1) },
      outputSchema: TellPeerOutputSchema,
    },
    ({ peer, message }) => tellPeer(directory, caller(), peer, message),
  );

  server.registerTool(
    "read_inbox",
    {
      description: "Take your unread messages from other workers (each is returned once).",
      outputSchema: ReadInboxOutputSchema,
    },
    () => readInbox(directory, caller),
  );

  server.registerTool(
    "spawn_worker",
    {
      description: "Run a separate sub-task in a new worker and wait for its final answer. It sees none of your context: give a complete prompt.",
      inputSchema: {
        prompt: z.string().min(1),
        agent: z.string().min(1).optional().describe("agent to run it as; default: a plain worker"),
      },
      outputSchema: SpawnWorkerOutputSchema,
    },
    async ({ prompt, agent }, extra) => {
      try {
        const { taskId, text, costUsd } = await directory.spawn(caller(), prompt, agent, extra.signal);
        return ok({ task_id: taskId, answer: text, cost_usd: costUsd }, text);
      } catch (error) {
        return refuse(`spawn_worker failed: ${messageOf(error)}`);
      }
    },
  );

  return server;
}
