// The errors of a distributed run: Redis unreachable, and data in Redis cadre cannot read.
import { CadreError } from "../errors.ts";

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
