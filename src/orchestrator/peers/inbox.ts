// Where tell_peer leaves messages and read_inbox takes them: in memory, or a store shared by several processes.
import type { InboxMessage } from "./directory.ts";

/**
 * Where tell_peer leaves messages and read_inbox takes them, by peer name.
 * Orchestrators in several processes that serve one swarm share a store kept
 * elsewhere (cadre's distributed runs keep it in Redis).
 */
export interface InboxStore {
  post(peer: string, message: InboxMessage): void | Promise<void>;
  /** Removes and returns the peer's unread messages, oldest first. */
  take(peer: string): InboxMessage[] | Promise<InboxMessage[]>;
}

/** The default store: inboxes in this process. */
export class MemoryInbox implements InboxStore {
  readonly #inboxes = new Map<string, InboxMessage[]>();

  post(peer: string, message: InboxMessage): void {
    const inbox = this.#inboxes.get(peer) ?? [];
    inbox.push(message);
    this.#inboxes.set(peer, inbox);
  }

  take(peer: string): InboxMessage[] {
    const inbox = this.#inboxes.get(peer) ?? [];
    this.#inboxes.delete(peer);
    return inbox;
  }
}
