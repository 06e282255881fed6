/** Runs past one machine: a coordinator enqueues a swarm's tasks in Redis (BullMQ), hosts (`cadre worker`) run them. */
export { Coordinator, type CoordinatorOptions } from "./coordinator.ts";
export { DistributedDataError, RedisUnreachableError } from "./errors.ts";
export { Host, type HostOptions } from "./host.ts";
export { RUN_ID_PATTERN } from "./keys.ts";
export type { HostObserver } from "./run-host.ts";
export { redactUrl, redisUrlProblem } from "./url.ts";
export type { SharedOrchestratorOptions } from "./wire.ts";
