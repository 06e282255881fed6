// Resetting a process's conversation with /clear for its next task, and what the reset left running.
import type { BackgroundTasksChangedMessage, CliMessage, ResultMessage, SystemInitMessage } from "../protocol/index.ts";
import { ResetFailedError } from "./errors.ts";
import type { TurnResult } from "./turn.ts";
import type { Worker } from "./worker.ts";

/** What a reset left: the new session, and what the CLI still runs from before it. */
export interface ConversationReset {
  /** The system/init of the new session: its id, cwd and permission mode. */
  init: SystemInitMessage;
  /** Background tasks (shells, agents) still running: a reset does not stop them. */
  backgroundTasks: BackgroundTasksChangedMessage["tasks"];
  /** The reset's own result: no turns, no cost on the pinned CLI. */
  result: ResultMessage;
  messages: CliMessage[];
}

const DEFAULT_RESET_TIMEOUT_MS = 10_000;

/**
 * Starts a new conversation in a live worker by sending "/clear". Measured
 * on CLI 2.1.330, the CLI answers with conversation_reset, the list of
 * background tasks that outlive the reset (background_tasks_changed), a
 * system/init of a new session id, and a result with num_turns 0 and cost 0.
 * What /clear keeps (permissions granted for the session, a permission mode
 * the session switched to, background tasks) is the caller's to judge from
 * the answer. Rejects with ResetFailedError when the answer is not that.
 */
export async function resetConversation(worker: Worker, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ConversationReset> {
  const before = worker.sessionId;
  const limit = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_RESET_TIMEOUT_MS);
  let turn: TurnResult;
  try {
    turn = await worker.run("/clear", { verbatim: false, reject: false, signal: options.signal ? AbortSignal.any([options.signal, limit]) : limit });
  } catch (error) {
    throw new ResetFailedError(limit.aborted ? "no answer to /clear in time" : (error as Error).message, error);
  }
  const { messages, result } = turn;
  let init: SystemInitMessage | undefined;
  let backgroundTasks: BackgroundTasksChangedMessage["tasks"] = [];
  let cleared = false;
  for (const message of messages) {
    if (message.type === "conversation_reset") cleared = true;
    else if (message.type === "system" && message.subtype === "init") init = message as SystemInitMessage;
    else if (message.type === "system" && message.subtype === "background_tasks_changed") {
      backgroundTasks = (message as BackgroundTasksChangedMessage).tasks;
    }
  }
  if (turn.isError) throw new ResetFailedError(`/clear ended in error (${turn.subtype}: ${turn.errors.join("; ")})`);
  if (!cleared) throw new ResetFailedError("the CLI did not report a conversation reset");
  if (turn.numTurns !== 0) throw new ResetFailedError(`/clear ran ${turn.numTurns} model turn(s) instead of resetting`);
  if (!init || init.session_id === before) throw new ResetFailedError("the CLI did not start a new session");
  return { init, backgroundTasks, result, messages };
}
