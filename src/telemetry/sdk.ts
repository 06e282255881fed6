/**
 * The OpenTelemetry SDK as cadre starts it: a tracer provider with a batch
 * processor and an OTLP/HTTP exporter (JSON or protobuf), a meter provider
 * with a periodic OTLP reader and, if asked, a Prometheus endpoint. Loaded
 * only by `import()` when telemetry is on (see ./config.ts): the standard
 * OTEL_* settings (endpoints, headers, timeouts, service name, resource
 * attributes) are read by the SDK's own exporters and detectors.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import process from "node:process";
import { type Meter, type Tracer, trace } from "@opentelemetry/api";
import { setGlobalErrorHandler } from "@opentelemetry/core";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider, type MetricReader, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { CADRE_VERSION } from "../util/version.ts";
import type { OtlpProtocol, TelemetrySettings } from "./config.ts";

/** The final flush waits this long at most: an exporter that cannot reach its endpoint must not hold up the exit. */
const FLUSH_LIMIT_MS = 3_000;

export interface Telemetry {
  readonly tracer: Tracer;
  readonly meter: Meter;
  readonly settings: TelemetrySettings;
  /** Where Prometheus scrapes (`--metrics`), once it listens. */
  readonly prometheusUrl: string | undefined;
  /** Sends what is buffered; resolves within a few seconds whatever the exporter does. */
  flush(): Promise<void>;
  /** Flushes and stops (closes the Prometheus endpoint). */
  shutdown(): Promise<void>;
}

export interface TelemetryIdentity {
  /** What this process is: "run", "worker" (a host) or "mcp". */
  role: string;
  /** `cadre.host`: a host's --name, else the machine's name. */
  host?: string;
  /** Where failures to export are told, once (a line of the command's output). */
  log(line: string): void;
}

/** A standard OTEL_* number (the SDK's processors no longer read their own), or undefined. */
function envMillis(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

async function traceExporter(protocol: OtlpProtocol): Promise<SpanExporter> {
  if (protocol === "http/json") return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
}

async function metricReader(protocol: OtlpProtocol): Promise<MetricReader> {
  const { OTLPMetricExporter } =
    protocol === "http/json" ? await import("@opentelemetry/exporter-metrics-otlp-http") : await import("@opentelemetry/exporter-metrics-otlp-proto");
  const interval = envMillis("OTEL_METRIC_EXPORT_INTERVAL");
  return new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), ...(interval !== undefined && { exportIntervalMillis: interval }) });
}

function bounded(work: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, FLUSH_LIMIT_MS);
    timer.unref();
  });
  return Promise.race([
    work.then(
      () => undefined,
      () => undefined,
    ),
    limit,
  ]).finally(() => clearTimeout(timer));
}

/** Starts exporting as `settings` say; an endpoint that cannot be reached is told once through `identity.log` and never fails a run. */
export async function startTelemetry(settings: TelemetrySettings, identity: TelemetryIdentity): Promise<Telemetry> {
  let told = false;
  setGlobalErrorHandler((error) => {
    if (told) return;
    told = true;
    const detail = error instanceof Error ? error.message : String(error);
    identity.log(`telemetry: cannot export (${detail.split("\n")[0]}); the run goes on without it`);
  });
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: "cadre",
    [ATTR_SERVICE_VERSION]: CADRE_VERSION,
    "cadre.role": identity.role,
    "cadre.host": identity.host ?? hostname(),
  }).merge(detectResources({ detectors: [envDetector] }));

  const delay = envMillis("OTEL_BSP_SCHEDULE_DELAY");
  const processors = settings.traces
    ? [
        new BatchSpanProcessor({
          exporter: await traceExporter(settings.protocol.traces),
          ...(delay !== undefined && { scheduledDelayMillis: delay }),
        }),
      ]
    : [];
  const tracerProvider = new TracerProvider({ resource, spanProcessors: processors });
  const readers: MetricReader[] = settings.metrics ? [await metricReader(settings.protocol.metrics)] : [];
  // Served by a server of cadre's own: the exporter's would take port 0 for its default, 9464.
  let metricsServer: Server | undefined;
  let prometheusUrl: string | undefined;
  if (settings.prometheus) {
    const { host, port } = settings.prometheus;
    const prometheus = new PrometheusExporter({ preventServerStart: true });
    metricsServer = createServer((request, response) => {
      if (request.url?.split("?")[0] === "/metrics") return prometheus.getMetricsRequestHandler(request, response);
      response.writeHead(404).end();
    });
    const server = metricsServer;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, resolve);
    });
    const bound = (server.address() as AddressInfo).port;
    prometheusUrl = `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics`;
    readers.push(prometheus);
  }
  const meterProvider = new MeterProvider({ resource, readers });
  const flush = () => bounded(Promise.all([tracerProvider.forceFlush(), meterProvider.forceFlush()]));
  return {
    tracer: settings.traces ? tracerProvider.getTracer("cadre", CADRE_VERSION) : trace.getTracer("cadre-off"),
    meter: meterProvider.getMeter("cadre", CADRE_VERSION),
    settings,
    prometheusUrl,
    flush,
    // Shutting down flushes first; one bound for both, so an unreachable endpoint holds the exit at most FLUSH_LIMIT_MS.
    shutdown: () =>
      bounded(
        Promise.all([
          tracerProvider.shutdown(),
          meterProvider.shutdown(),
          new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined))),
        ]),
      ),
  };
}
