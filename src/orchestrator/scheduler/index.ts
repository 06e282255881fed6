// The scheduler's surface: admission, the adaptive limit, back-off and retries.
export { AbortError } from "../../errors.ts";
export type { AdaptiveLimitOptions, RateLimitState } from "./adaptive-limit.ts";
export { AdaptiveLimit } from "./adaptive-limit.ts";
export { Admission, type Admitted, type Withdrawal } from "./admission.ts";
export { AutoConcurrency, LOCAL_MACHINE, MAX_AUTO_CONCURRENCY, type MachineProbe } from "./auto-concurrency.ts";
export { QueueClearedError, SchedulerOptionError } from "./errors.ts";
export type { RetryOptions } from "./retry.ts";
export { retryWithBackoff } from "./retry.ts";
export type {
  KeyCounts,
  ScheduleOptions,
  SchedulerCounts,
  SchedulerEvent,
  SchedulerListener,
  SchedulerOptions,
} from "./scheduler.ts";
export { Scheduler } from "./scheduler.ts";
