/**
 * Whether a command exports OpenTelemetry, read from the standard OTEL_*
 * environment and cadre's flags. This file loads no OpenTelemetry module:
 * with telemetry off, nothing of the SDK is ever imported.
 */
import { CadreError } from "../errors.ts";

/** How spans and metrics are encoded over OTLP/HTTP (OTEL_EXPORTER_OTLP_PROTOCOL); gRPC is not offered. */
export type OtlpProtocol = "http/json" | "http/protobuf";

export interface TelemetrySettings {
  /** Export spans over OTLP (an endpoint is set, or --otel asked for the SDK's default, localhost:4318). */
  traces: boolean;
  /** Export metrics over OTLP. */
  metrics: boolean;
  protocol: { traces: OtlpProtocol; metrics: OtlpProtocol };
  /** Put prompts, tool inputs and answers in spans (--otel-content or CADRE_OTEL_CONTENT=1): they can hold secrets. */
  content: boolean;
  /** Serve the metrics for Prometheus on this address (`--metrics HOST:PORT`). */
  prometheus: { host: string; port: number } | undefined;
}

export interface TelemetryFlags {
  /** --otel: export even with no endpoint in the environment (to the SDK's default, http://localhost:4318). */
  otel?: boolean;
  /** --otel-content. */
  content?: boolean;
  /** --metrics HOST:PORT. */
  prometheus?: { host: string; port: number };
}

const TRUE = /^(1|true|yes|on)$/i;

function protocolOf(value: string | undefined, name: string): OtlpProtocol {
  if (value === undefined || value === "" || value === "http/protobuf") return "http/protobuf";
  if (value === "http/json") return "http/json";
  throw new TelemetryConfigError(`${name}=${value} is not supported: cadre exports over OTLP/HTTP, "http/protobuf" or "http/json"`);
}

/** A setting cadre cannot honour: the command stops with it before it starts anything. */
export class TelemetryConfigError extends CadreError {
  constructor(message: string) {
    super("TELEMETRY_CONFIG", message);
  }
}

/**
 * The telemetry a command exports, or undefined when it exports none: no
 * OTLP endpoint in the environment, no --otel, no --metrics (or
 * OTEL_SDK_DISABLED=true, which wins over everything, as in every OpenTelemetry SDK).
 */
export function telemetrySettings(flags: TelemetryFlags, env: NodeJS.ProcessEnv = process.env): TelemetrySettings | undefined {
  if (TRUE.test(env.OTEL_SDK_DISABLED ?? "")) return undefined;
  const any = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const traces = flags.otel === true || any || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const metrics = flags.otel === true || any || Boolean(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
  // "none" turns one signal off, as the SDK's own OTEL_*_EXPORTER settings do.
  const tracesOn = traces && env.OTEL_TRACES_EXPORTER !== "none";
  const metricsOn = metrics && env.OTEL_METRICS_EXPORTER !== "none";
  if (!tracesOn && !metricsOn && flags.prometheus === undefined) return undefined;
  const general = env.OTEL_EXPORTER_OTLP_PROTOCOL;
  return {
    traces: tracesOn,
    metrics: metricsOn,
    protocol: {
      traces: protocolOf(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? general, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
      metrics: protocolOf(env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? general, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"),
    },
    content: flags.content === true || TRUE.test(env.CADRE_OTEL_CONTENT ?? ""),
    prometheus: flags.prometheus,
  };
}

const HELP: [flag: string, lines: string[]][] = [
  [
    "--otel",
    [
      "export OpenTelemetry traces and metrics over OTLP/HTTP (also on whenever",
      "OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT is set; default endpoint",
      "http://localhost:4318)",
    ],
  ],
  ["--otel-content", ["put prompts, tool inputs and answers in the spans (or CADRE_OTEL_CONTENT=1);", "off by default, since they can hold secrets"]],
];

/** The help lines of the telemetry flags, the same for every command that has them; descriptions start at `column`. */
export function telemetryHelp(column: number): string {
  const pad = (text: string) => text.padEnd(column);
  return HELP.flatMap(([flag, lines]) => lines.map((line, i) => `${pad(i === 0 ? `  ${flag}` : "")}${line}`)).join("\n");
}
