/**
 * OpenTelemetry traces and metrics of cadre's runs, hosts and MCP server,
 * from their events. This entry loads no OpenTelemetry module: a command
 * reads its settings here and imports `loadTelemetry()` only when they ask
 * for telemetry, so a command without them costs nothing.
 */
export { type TelemetrySettings, telemetryHelp, telemetrySettings } from "./config.ts";

// A type only: naming it loads nothing.
export type { RunTelemetry } from "./run.ts";

/** The SDK and cadre's spans and metrics, loaded on demand. */
export const loadTelemetry = () => import("./load.ts");
