// The records of sessions other than tasks (peers, supervisors, children): their ids, cost, usage and transcripts.
import { randomUUID } from "node:crypto";
import type { CliMessage } from "../protocol/index.ts";
import { emptyUsage } from "./accounting.ts";
import type { SessionRecord, TaskResult, Usage } from "./types.ts";

/** The session id a message names, if any (init, assistant, result, … carry one). */
export function sessionIdOf(message: CliMessage): string | undefined {
  const id = (message as { session_id?: unknown }).session_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** What a child's record reads from its task while it runs. */
export interface ChildTask {
  info: { id: string; name: string; agent: string | undefined };
  sessionId: string | undefined;
  costUsd: number;
  usage: Usage;
}

/**
 * The records of the worker sessions beside the tasks (Orchestrator.sessionRecords),
 * in the order they started, each read as it is now.
 */
export class SessionRecords {
  readonly #reads: (() => SessionRecord)[] = [];

  list(): SessionRecord[] {
    return this.#reads.map((read) => read());
  }

  /** A peer's or supervisor's record, which its owner updates as the session goes. */
  openAgentSession(role: "peer" | "supervisor", agent: string, asker: string | undefined): SessionRecord {
    const record: SessionRecord = {
      id: randomUUID().slice(0, 8),
      role,
      name: `${role}:${agent}`,
      agent,
      parent: asker,
      sessionId: undefined,
      costUsd: 0,
      usage: emptyUsage(),
      numTurns: 0,
      status: undefined,
    };
    this.#reads.push(() => ({ ...record, usage: { ...record.usage } }));
    return record;
  }

  /** A spawned child, read from its task (the one place its cost is kept); `settled` gives its result once it has one. */
  addChild(task: ChildTask, parent: string | undefined, settled: () => TaskResult | undefined): void {
    this.#reads.push(() => ({
      id: task.info.id,
      role: "child",
      name: task.info.name,
      agent: task.info.agent,
      parent,
      sessionId: task.sessionId,
      costUsd: task.costUsd,
      usage: { ...task.usage },
      numTurns: settled()?.numTurns ?? 0,
      status: settled()?.status,
    }));
  }
}
