/**
 * What the built-in "cadre" MCP server needs from the orchestrator. The
 * orchestrator implements it; the peer tools only translate between MCP and it.
 */

/** Who is calling: the worker whose model used the tool, and the chain of workers waiting on it. */
export interface Caller {
  /** The caller's peer name (its agent name, or the task name for agent-less tasks). */
  name: string;
  /** Names of the workers waiting, directly or not, on the caller's current turn (outermost first). */
  waitChain: readonly string[];
}

export interface PeerInfo {
  name: string;
  description: string;
  /** "idle" | "busy" | "not_started" … as the orchestrator reports it. */
  status: string;
}

export interface InboxMessage {
  from: string;
  text: string;
  /** Epoch milliseconds. */
  at: number;
}

export interface PeerDirectory {
  /** Peers the caller may reach (connections apply). */
  listPeers(caller: Caller): PeerInfo[];
  /** Whether `connections` allow caller → peer. */
  canReach(caller: Caller, peer: string): boolean;
  /** Whether a peer of this name exists at all, reachable or not: tells a typo from a connection rule. Absent: both read as "no peer you can reach". */
  isPeer?(name: string): boolean;
  /** Runs a turn on the peer with the question; resolves with its final text. */
  ask(caller: Caller, peer: string, question: string, signal: AbortSignal): Promise<string>;
  /** Delivers a message to the peer's inbox without waiting for the peer. */
  tell(caller: Caller, peer: string, message: string): void | Promise<void>;
  /** Takes (removes and returns) the caller's unread messages. */
  readInbox(caller: Caller): InboxMessage[] | Promise<InboxMessage[]>;
  /** Runs a child task under the same limits and budget; resolves with its final text. */
  spawn(caller: Caller, prompt: string, agent: string | undefined, signal: AbortSignal): Promise<{ taskId: string; text: string; costUsd: number }>;
}
