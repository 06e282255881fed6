/**
 * The stream-json protocol of the claude CLI: zod schemas, their inferred types,
 * parseCliMessage and stdin builders. Pure: no processes, no I/O.
 */
export * from "./background.ts";
export * from "./content.ts";
export * from "./control.ts";
export * from "./control-responses.ts";
export * from "./hooks.ts";
export * from "./messages.ts";
// The NDJSON codec (./ndjson.ts) is exported by its own line below.
export { DEFAULT_MAX_LINE_BYTES, encodeLine, NdjsonDecoder } from "./ndjson.ts";
export * from "./parse.ts";
export * from "./permissions.ts";
export * from "./prompt-cache.ts";
export * from "./replies.ts";
export * from "./session-settings.ts";
export * from "./stdin.ts";
export * from "./stream.ts";
export * from "./system.ts";
