// The typed error of a replay that cannot start: no record to replay, bad overrides, the original working tree.
import { CadreError } from "../../errors.ts";

export type ReplayErrorCode = "REPLAY_NO_RECORD" | "REPLAY_OVERRIDES_INVALID" | "REPLAY_IN_ORIGINAL_TREE";

export class ReplayError extends CadreError {
  constructor(code: ReplayErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
