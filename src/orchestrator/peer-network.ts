// The orchestrator's side of the peer tools: who may reach whom, peer sessions, inboxes and child tasks.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { own } from "../util/own.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import type { Caller, PeerDirectory, PeerInfo } from "./peers/directory.ts";
import type { InboxStore } from "./peers/inbox.ts";
import { createPeerServer, PEER_SERVER_NAME } from "./peers/peer-server.ts";
import { registerTaskTools } from "./peers/task-tools.ts";
import type { AgentSpec, TaskBoard, TaskResult } from "./types.ts";

/** The task behind a worker: children are spawned under it, and peers it starts are recorded as working for it. */
type ParentTask = { info: { name: string } };

export interface PeerNetworkOptions<P extends ParentTask> {
  agents: () => Record<string, AgentSpec>;
  /** Agent → agents it may reach. Absent: everyone may reach everyone. */
  connections: Record<string, string[]> | undefined;
  sessions: AgentSessions;
  inbox: InboxStore;
  spawn: (parent: P | undefined, prompt: string, agent: string | undefined, signal: AbortSignal) => Promise<TaskResult>;
}

/**
 * The orchestrator's side of the peer tools: who may reach whom, questions
 * answered by each agent's peer session, inboxes, and child tasks.
 */
export class PeerNetwork<P extends ParentTask> {
  constructor(private readonly options: PeerNetworkOptions<P>) {}

  /**
   * The "cadre" MCP server for one worker, asked at each call (a process may
   * change task): `name` is who it speaks as, `parent` the task its children
   * are charged to (and which posts tasks), `chain` who waits on its current
   * turn. `tools` says which of its tools it has: the peer tools, and with a
   * board the tools that post tasks to the run.
   */
  serverFor(
    name: () => string,
    parent: () => P | undefined,
    chain: () => readonly string[],
    tools: { peers: boolean; board?: TaskBoard },
  ): McpServer {
    const server = tools.peers
      ? createPeerServer(() => ({ name: name(), waitChain: chain() }), this.#directoryFor(parent))
      : new McpServer({ name: PEER_SERVER_NAME, version: "1.0.0" });
    if (tools.board) registerTaskTools(server, () => parent()?.info.name, tools.board);
    return server;
  }

  #directoryFor(parent: () => P | undefined): PeerDirectory {
    const { agents, sessions, inbox, spawn } = this.options;
    return {
      listPeers: (caller): PeerInfo[] =>
        Object.entries(agents())
          .filter(([name]) => name !== caller.name && this.#canReach(caller, name))
          .map(([name, agent]) => ({ name, description: agent.description, status: sessions.status("peer", name) })),
      canReach: (caller, peer) => this.#canReach(caller, peer),
      isPeer: (name) => own(agents(), name) !== undefined,
      ask: async (caller, peer, question, signal) => {
        if (!agents()[peer]) throw new Error(`no agent named "${peer}"`);
        const prompt = `Question from ${caller.name}:\n\n${question}`;
        const turn = await sessions.ask("peer", peer, prompt, [...caller.waitChain, caller.name], signal, parent()?.info.name);
        if (turn.isError) throw new Error(`${peer} could not answer: ${turn.errors.join("; ") || turn.subtype}`);
        return turn.text;
      },
      tell: (caller, peer, message) => inbox.post(peer, { from: caller.name, text: message, at: Date.now() }),
      readInbox: (caller) => inbox.take(caller.name),
      spawn: async (_caller, prompt, agent, signal) => {
        const result = await spawn(parent(), prompt, agent, signal);
        if (result.status !== "succeeded") throw new Error(`the child task ${result.status}: ${result.error?.message ?? "no details"}`);
        return { taskId: result.id, text: result.text, costUsd: result.costUsd };
      },
    };
  }

  /** Whether a worker speaking as `name` has another agent to reach: what it needs the peer tools for. */
  reachesAnyone(name: string): boolean {
    return Object.keys(this.options.agents()).some((peer) => peer !== name && this.#canReach({ name, waitChain: [] }, peer));
  }

  #canReach(caller: Caller, peer: string): boolean {
    const { connections } = this.options;
    if (!connections) return true;
    return own(connections, caller.name)?.includes(peer) ?? false;
  }
}
