// The span of a task an agent posted names its poster whichever comes first, its queueing or the news of its post:
// the run's events, fed to RunTelemetry in both orders, with spans kept in memory.
import { createNoopMeter } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import type { TaskInfo } from "../../src/orchestrator/index.ts";
import type { RunEvent } from "../../src/run/index.ts";
import { RunTelemetry } from "../../src/telemetry/run.ts";
import type { Telemetry } from "../../src/telemetry/sdk.ts";
import { result } from "../support/swarm.ts";

function memoryTelemetry(): { telemetry: Telemetry; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const telemetry: Telemetry = {
    tracer: provider.getTracer("test"),
    meter: createNoopMeter(),
    settings: { traces: true, metrics: false, protocol: { traces: "http/json", metrics: "http/json" }, content: false, prometheus: undefined },
    prometheusUrl: undefined,
    flush: async () => {},
    // The in-memory exporter forgets its spans when shut down: the test reads them after the run's end.
    shutdown: () => provider.forceFlush(),
  };
  return { telemetry, exporter };
}

const info = (name: string): TaskInfo => ({ id: `id-${name}`, name, agent: "fixer", parentId: undefined });
const posted = (name: string, by: string, depth: number): RunEvent => ({
  type: "tasks_added",
  parent: by,
  tasks: [{ name, template: name, agent: "fixer", depends_on: [], posted: { by, depth }, prompt: `fix ${name}` }],
});
const queued = (name: string): RunEvent => ({ type: "task_queued", task: info(name) });
const finished = (name: string): RunEvent => ({ type: "task_finished", task: info(name), result: result(name, "succeeded", { id: `id-${name}` }) });

describe("the span of a posted task", () => {
  it("says who posted it and how deep, told before or after its span started; a task of the file says neither", async () => {
    const { telemetry, exporter } = memoryTelemetry();
    const run = new RunTelemetry(telemetry, { swarm: "posting", tasks: [{ name: "lead", prompt: "plan" }], distributed: false, concurrency: 4 });
    const events: RunEvent[] = [
      queued("lead"),
      posted("fix-a", "lead", 1),
      queued("fix-a"),
      // The engine's events and the plan's are not ordered between them: this one is queued before its post is told.
      queued("fix-b"),
      posted("fix-b", "fix-a", 2),
      finished("fix-a"),
      finished("fix-b"),
      finished("lead"),
    ];
    for (const event of events) run.apply(event);
    await run.finish(undefined);
    const origin = (name: string) => {
      const span = exporter.getFinishedSpans().find((s) => s.name === `task ${name}`);
      return [span?.attributes["cadre.posted_by"], span?.attributes["cadre.post_depth"]];
    };
    expect(origin("lead")).toEqual([undefined, undefined]);
    expect(origin("fix-a")).toEqual(["lead", 1]);
    expect(origin("fix-b")).toEqual(["fix-a", 2]);
  });

  it("says so when it settled without running here (a resumed run's, carried over)", async () => {
    const { telemetry, exporter } = memoryTelemetry();
    const run = new RunTelemetry(telemetry, { swarm: "posting", tasks: [], distributed: false, concurrency: 4 });
    run.apply(posted("fix-a", "lead", 1));
    const kept = result("fix-a", "succeeded", { id: "id-fix-a" });
    run.apply({ type: "task_settled", task: { name: "fix-a", agent: "fixer" }, result: kept, started: false, carriedOver: true });
    await run.finish(undefined);
    expect(exporter.getFinishedSpans().find((s) => s.name === "task fix-a")?.attributes).toMatchObject({
      "cadre.carried_over": true,
      "cadre.posted_by": "lead",
      "cadre.post_depth": 1,
    });
  });
});
