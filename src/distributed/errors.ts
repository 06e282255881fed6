// The errors of a distributed run: Redis unreachable, data in Redis cadre cannot read, a host that does not answer for its task.
import { CadreError } from "../errors.ts";
import type { SteerAction } from "../orchestrator/index.ts";

/** The code of a RedisUnreachableError, as records keep it. */
export const REDIS_UNREACHABLE = "REDIS_UNREACHABLE";

/** Redis could not be reached at start, or was lost for longer than a run can wait. */
export class RedisUnreachableError extends CadreError {
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(REDIS_UNREACHABLE, `cannot reach Redis at ${url}: ${detail}; is redis-server running there?`, options);
  }
}

/** Something in Redis is not what cadre wrote there (another program's keys, or another cadre version's). */
export class DistributedDataError extends CadreError {
  constructor(what: string, detail: string) {
    super("DISTRIBUTED_DATA", `${what} in Redis is not in cadre's format: ${detail}`);
  }
}

/** What each steering action is, for its errors. */
const STEERED: Record<SteerAction, string> = { send: "the message", interrupt: "the interrupt", stop: "the stop" };

/**
 * The host that runs a task did not answer a message, interrupt or stop for it in time: it has stopped, died, or lost Redis.
 * `reached` says whether the request may still have reached the task: false when it was withdrawn before any host took it.
 * `olderCadre`: no host took it, and that host never said it answers steering requests (it may run a cadre from before them).
 */
export class HostNotAnsweringError extends CadreError {
  constructor(
    readonly host: string,
    action: keyof typeof STEERED,
    waitedMs: number,
    readonly reached: boolean,
    readonly olderCadre = false,
  ) {
    const outcome = reached
      ? `${STEERED[action]} may have reached the task (its events in the run say whether it did)`
      : `${STEERED[action]} did not reach the task`;
    const why = olderCadre
      ? "it never said it takes steering requests: is it running an older cadre? Upgrade it to steer its tasks"
      : "has it stopped, or lost Redis?";
    super("HOST_NOT_ANSWERING", `no answer from host "${host}" within ${waitedMs / 1000} s (${why}): ${outcome}`);
  }
}

/** The host that runs a task could not do what was asked of it; the code and the reason are the host's. */
export class RemoteSteeringError extends CadreError {
  constructor(host: string, code: string, message: string) {
    super(code, `on host "${host}": ${message}`);
  }
}
