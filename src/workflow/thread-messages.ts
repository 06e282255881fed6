/** What crosses between cadre's thread and its sandbox's thread: the messages each way, and the flag a synchronous host call waits on. */
import type { MessagePort } from "node:worker_threads";
import type { WorkflowLimit } from "./errors.ts";
import type { SandboxLimits } from "./sandbox-contract.ts";

/** A script to run, as the sandbox's thread takes it (its host stays on cadre's thread). */
export interface ThreadScript {
  body: string;
  filename: string;
  argsJson: string | undefined;
  budgetTotal: number | null;
  nested: boolean;
  /** The strand its top level goes on (SandboxScript.strand). */
  strand: number;
}

/** An error as it crosses: its message, and the limit of a WorkflowLimitError. */
export interface CrossingError {
  message: string;
  limit?: WorkflowLimit;
}

/** The host calls that answer at once (the script waits on them, blocked): their answers come back through ThreadData. */
export type SyncCallName = "checkCaps" | "spent" | "spentUsd" | "remainingUsd" | "fork" | "item" | "join";

export type ToThread =
  | { type: "open"; limits: SandboxLimits }
  | { type: "run"; run: number; script: ThreadScript }
  | { type: "answer"; call: number; ok: true; value: unknown }
  | { type: "answer"; call: number; ok: false; message: string }
  /** The run is over: drop its engine (the thread may serve another run). */
  | { type: "close" };

export type FromThread =
  | { type: "opened" }
  | { type: "open_failed"; error: CrossingError }
  | { type: "call"; run: number; call: number; name: "agent" | "workflow"; args: [unknown, unknown, number] }
  | { type: "sync"; run: number; name: SyncCallName; args: unknown[] }
  | { type: "note"; run: number; name: "log" | "phase"; text: string }
  | { type: "settled"; run: number; ok: true; json: string | undefined }
  | { type: "settled"; run: number; ok: false; error: CrossingError };

export type SyncAnswer = { ok: true; value: number | undefined } | { ok: false; message: string };

/** What the sandbox's thread starts with: the port its synchronous answers come on, and the flag that says one is there. */
export interface ThreadData {
  answers: MessagePort;
  /** One Int32: SYNC_WAITING while the thread waits, SYNC_ANSWERED once its answer is on `answers`. */
  flag: SharedArrayBuffer;
}

export const SYNC_WAITING = 0;
export const SYNC_ANSWERED = 1;

export function crossingError(error: unknown): CrossingError {
  const { limit } = error as { limit?: WorkflowLimit };
  return { message: error instanceof Error ? error.message : String(error), ...(limit !== undefined && { limit }) };
}
