/** What a command starts when telemetry is on (imported only then, through loadTelemetry()). */
import type { TelemetrySettings } from "./config.ts";
import { OrchestratorTelemetry } from "./observer.ts";
import { type RunDescription, RunTelemetry } from "./run.ts";
import { startTelemetry, type TelemetryIdentity } from "./sdk.ts";

export type { OrchestratorTelemetry } from "./observer.ts";
export type { RunTelemetry } from "./run.ts";

/** The telemetry of one `cadre run`: a swarm's, or a workflow script's. */
export async function startRunTelemetry(settings: TelemetrySettings, run: RunDescription, log: (line: string) => void): Promise<RunTelemetry> {
  return new RunTelemetry(await startTelemetry(settings, { role: "run", log }), run);
}

/** The telemetry of a host (`cadre worker`) or of `cadre mcp`: an observer of their orchestrators' events. */
export async function startProcessTelemetry(
  settings: TelemetrySettings,
  identity: TelemetryIdentity,
  concurrency: number | undefined,
): Promise<{ observer: OrchestratorTelemetry; prometheusUrl: string | undefined }> {
  const telemetry = await startTelemetry(settings, identity);
  return {
    observer: new OrchestratorTelemetry(telemetry, identity.host ? { "cadre.host": identity.host } : {}, concurrency),
    prometheusUrl: telemetry.prometheusUrl,
  };
}
