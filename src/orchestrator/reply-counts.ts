// How many model replies each session's conversation holds so far: the step a steering action is recorded at.
import type { CliMessage } from "../protocol/index.ts";
import { sessionIdOf } from "./session-records.ts";

/**
 * Counts a session's model replies as a replay numbers its turns (the replies in the
 * conversation a request carries): the main conversation's only (not its subagents'),
 * each reply once (the CLI streams one message per content block, all with the reply's
 * id), and no API error (the CLI's synthetic message is no reply of the model). Kept
 * per session, so that a session a later round continues counts on from its history.
 */
export class ReplyCounts {
  readonly #bySession = new Map<string, { count: number; lastId: string | undefined }>();

  observe(message: CliMessage): void {
    if (message.type !== "assistant" || (message.parent_tool_use_id ?? undefined) !== undefined) return;
    if (message.error !== undefined || message.message.model === "<synthetic>") return;
    const session = sessionIdOf(message);
    if (session === undefined) return;
    const id = typeof message.message.id === "string" && message.message.id !== "" ? message.message.id : undefined;
    const counted = this.#bySession.get(session) ?? { count: 0, lastId: undefined };
    if (id === undefined || id !== counted.lastId) counted.count += 1;
    counted.lastId = id;
    this.#bySession.set(session, counted);
  }

  /** The replies of that session so far; 0 for one not seen (or not known yet). */
  of(session: string | undefined): number {
    return session === undefined ? 0 : (this.#bySession.get(session)?.count ?? 0);
  }
}
