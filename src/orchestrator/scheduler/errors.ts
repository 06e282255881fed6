// The scheduler's errors: a job dropped by clear(), and an option out of range.
import { CadreError } from "../../errors.ts";

/** A waiting job was dropped by `Scheduler.clear()` before it started. */
export class QueueClearedError extends CadreError {
  constructor() {
    super("QUEUE_CLEARED", "the scheduler was cleared before this job started; schedule it again to run it");
  }
}

/** A scheduler or retry option is out of range (a programming error in the caller); worded like p-queue's own checks. */
export class SchedulerOptionError extends CadreError {
  constructor(name: string, expected: string, value: unknown) {
    super("SCHEDULER_OPTION", `Expected \`${name}\` to be ${expected}, got \`${String(value)}\` (${typeof value})`);
  }
}

/** A limit on jobs at once. */
export function requireLimit(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new SchedulerOptionError(name, "a whole number from 1 and up", value);
  return value;
}

export function requireDelay(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new SchedulerOptionError(name, "a finite number of milliseconds from 0 and up", value);
  return value;
}
