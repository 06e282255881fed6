/** Runs past one machine: a coordinator enqueues a swarm's tasks in Redis (BullMQ), hosts (`cadre worker`) run them. */
// The coordinator and the host load BullMQ: their classes are imported by name, lazily, where used.
export type { Coordinator, CoordinatorOptions } from "./coordinator.ts";
export { DistributedDataError, REDIS_UNREACHABLE, RedisUnreachableError } from "./errors.ts";
export type { Host, HostOptions } from "./host.ts";
export { RUN_ID_PATTERN } from "./keys.ts";
export type { HostObserver } from "./run-host.ts";
export { redactUrl, redisUrlProblem } from "./url.ts";
export type { SharedOrchestratorOptions } from "./wire.ts";
