/** Runs past one machine: a coordinator enqueues a swarm's tasks in Redis (BullMQ), hosts (`cadre worker`) run them. */
// The coordinator and the host load BullMQ: their classes are imported by name, lazily, where used.

export { HostNotAnsweringError, REDIS_UNREACHABLE } from "./errors.ts";
export type { Host } from "./host.ts";
export { RUN_ID_PATTERN } from "./keys.ts";
export type { HostObserver } from "./run-host.ts";
export { redactUrl, redisUrlProblem } from "./url.ts";
