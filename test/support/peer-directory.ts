import type { Caller, InboxMessage, PeerDirectory, PeerInfo } from "../../src/orchestrator/peers/directory.ts";

/**
 * A small in-memory PeerDirectory standing in for the orchestrator: the thing
 * under test is the MCP tool layer. It records what it was asked.
 */
export class DirectoryDouble implements PeerDirectory {
  readonly asks: { caller: Caller; peer: string; question: string; signal: AbortSignal }[] = [];
  readonly tells: { caller: Caller; peer: string; message: string }[] = [];
  readonly spawns: { caller: Caller; prompt: string; agent: string | undefined; signal: AbortSignal }[] = [];
  readonly inboxes = new Map<string, InboxMessage[]>();
  answer: (peer: string, question: string, signal: AbortSignal) => Promise<string> = async (peer, question) => `${peer} answers: ${question}`;

  constructor(
    readonly peers: PeerInfo[],
    /** Caller name → peers it may reach; absent: everyone reaches everyone. */
    readonly connections?: Record<string, string[]>,
  ) {}

  isPeer(name: string): boolean {
    return this.peers.some((p) => p.name === name);
  }

  canReach(caller: Caller, peer: string): boolean {
    return (
      peer !== caller.name &&
      this.peers.some((p) => p.name === peer) &&
      (this.connections?.[caller.name]?.includes(peer) ?? this.connections === undefined)
    );
  }

  listPeers(caller: Caller): PeerInfo[] {
    return this.peers.filter((p) => this.canReach(caller, p.name));
  }

  ask(caller: Caller, peer: string, question: string, signal: AbortSignal): Promise<string> {
    this.asks.push({ caller, peer, question, signal });
    return this.answer(peer, question, signal);
  }

  tell(caller: Caller, peer: string, message: string): void {
    this.tells.push({ caller, peer, message });
    const inbox = this.inboxes.get(peer) ?? [];
    inbox.push({ from: caller.name, text: message, at: Date.UTC(2025, 0, 2, 3, 4, 5) });
    this.inboxes.set(peer, inbox);
  }

  readInbox(caller: Caller): InboxMessage[] {
    const messages = this.inboxes.get(caller.name) ?? [];
    this.inboxes.delete(caller.name);
    return messages;
  }

  async spawn(caller: Caller, prompt: string, agent: string | undefined, signal: AbortSignal) {
    this.spawns.push({ caller, prompt, agent, signal });
    return { taskId: "t7", text: `done: ${prompt}`, costUsd: 0.0123 };
  }
}
