import { CadreError } from "../../errors.ts";

/** A waiting job was dropped by `Scheduler.clear()` before it started. */
export class QueueClearedError extends CadreError {
  constructor() {
    super("QUEUE_CLEARED", "the scheduler was cleared before this job started; schedule it again to run it");
  }
}

/** A scheduler or retry option is out of range (a programming error in the caller). */
export class SchedulerOptionError extends CadreError {
  constructor(message: string) {
    super("SCHEDULER_OPTION", message);
  }
}

export function requireLimit(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new SchedulerOptionError(`${name} must be a whole number of at least 1, got ${String(value)}`);
  }
  return value;
}

export function requireDelay(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new SchedulerOptionError(`${name} must be a finite number of milliseconds >= 0, got ${String(value)}`);
  }
  return value;
}
