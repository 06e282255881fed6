// An OTLP/HTTP receiver of the tests' own, on loopback: it takes what the official exporters send
// (JSON or protobuf, decoded with the OpenTelemetry protobuf definitions protobufjs generated) and
// keeps the spans and metric names. Nothing is parsed by hand.

import { createServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { onTestFinished } from "vitest";

const require = createRequire(import.meta.url);
// @opentelemetry/otlp-transformer 0.208 (installed as otlp-proto-decode), the last that shipped the generated protobuf root.
const root = require("otlp-proto-decode/build/src/generated/root.js").opentelemetry.proto.collector;
const TraceRequest = root.trace.v1.ExportTraceServiceRequest;
const MetricsRequest = root.metrics.v1.ExportMetricsServiceRequest;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  /** 0 unset, 1 ok, 2 error. */
  status: number;
  /** The resource's attributes (service.name, cadre.host, …). */
  resource: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
}

export interface OtlpReceiver {
  /** http://127.0.0.1:PORT, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** The names of every metric received. */
  metrics: Set<string>;
  /** Every request body as text (protobuf too: strings show through), to search for what must not be there. */
  raw: string[];
  /** The content types of the requests, e.g. to tell that protobuf really was sent. */
  contentTypes: Set<string>;
}

type AnyValue = { stringValue?: string; intValue?: unknown; doubleValue?: number; boolValue?: boolean };

function anyValue(value: AnyValue | undefined): string | number | boolean {
  if (!value) return "";
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  return Number(value.intValue ?? 0);
}

function attributesOf(list: { key: string; value?: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/** JSON carries ids as hex; protobuf as bytes. */
function hex(id: unknown): string {
  if (id === undefined || id === null) return "";
  if (typeof id === "string") return id;
  return Buffer.from(id as Uint8Array).toString("hex");
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: "", spans: [], metrics: new Set(), raw: [], contentTypes: new Set() };
  const server = createServer(async (request, response) => {
    const bytes = await body(request);
    const type = request.headers["content-type"] ?? "";
    receiver.contentTypes.add(type);
    receiver.raw.push(bytes.toString("latin1"));
    const protobuf = type.includes("protobuf");
    const decode = (message: { decode(b: Buffer): { toJSON?(): unknown } }) =>
      protobuf ? (message.decode(bytes) as any) : JSON.parse(bytes.toString("utf8"));
    if (request.url === "/v1/traces") {
      for (const resourceSpans of decode(TraceRequest).resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            receiver.spans.push({
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              attributes: attributesOf(span.attributes),
              status: Number(span.status?.code ?? 0),
              resource,
              links: (span.links ?? []).map((link: any) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
            });
          }
        }
      }
    } else if (request.url === "/v1/metrics") {
      for (const resourceMetrics of decode(MetricsRequest).resourceMetrics ?? []) {
        for (const scope of resourceMetrics.scopeMetrics ?? []) for (const metric of scope.metrics ?? []) receiver.metrics.add(metric.name);
      }
    }
    // An empty Export*ServiceResponse: zero bytes in protobuf, {} in JSON.
    response.writeHead(200, { "content-type": protobuf ? "application/x-protobuf" : "application/json" });
    response.end(protobuf ? undefined : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** The spans above `span`, nearest first. */
export function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: ReceivedSpan[] = [];
  for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) chain.push(parent);
  return chain;
}

/** The environment that points the official exporters at `receiver`, exporting at once. */
export function otlpEnv(receiver: OtlpReceiver, protocol: "http/json" | "http/protobuf"): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_BSP_SCHEDULE_DELAY: "200",
    OTEL_METRIC_EXPORT_INTERVAL: "500",
  };
}
