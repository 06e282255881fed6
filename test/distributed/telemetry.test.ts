// A traced run on two hosts: the coordinator's trace context travels with each job, so the hosts'
// spans join the run's one trace; a host's --metrics serves Prometheus's text format.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSummary } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { otlpEnv, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

/**
 * The Prometheus text exposition format, read strictly: every line is a HELP or TYPE
 * comment, or a sample of a family TYPE declared before it, with well-formed labels and a
 * number. Returns the samples; throws at the first line Prometheus would refuse.
 */
function parseExposition(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const METRIC = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
  const sample = new RegExp(`^(${METRIC})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: -?\\d+)?$`);
  const types = new Map<string, string>();
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  if (!text.endsWith("\n")) throw new Error("the exposition does not end with a newline");
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") continue;
    const type = new RegExp(`^# TYPE (${METRIC}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`TYPE twice for ${type[1]}`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (new RegExp(`^# HELP ${METRIC} `).test(line) || (line.startsWith("#") && !line.startsWith("# TYPE") && !line.startsWith("# HELP"))) continue;
    const match = sample.exec(line);
    if (!match) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = match;
    const family = [...types.keys()].find((f) => name === f || [`${f}_bucket`, `${f}_sum`, `${f}_count`, `${f}_total`].includes(name!));
    if (!family) throw new Error(`a sample of no declared family: ${line}`);
    const value = valueText === "+Inf" ? Infinity : valueText === "-Inf" ? -Infinity : Number(valueText);
    if (valueText !== "NaN" && Number.isNaN(value)) throw new Error(`not a number: ${line}`);
    const labels = Object.fromEntries([...(labelText ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    samples.push({ name: name!, labels, value });
  }
  return samples;
}

describe("a traced distributed run", () => {
  it("is one trace with spans from both hosts under the coordinator's task spans; a host serves its metrics to Prometheus", async () => {
    const redis = await startRedis();
    const receiver = await startOtlpReceiver();
    const env = otlpEnv(receiver, "http/protobuf");
    const model = await createRehearsal({ unused: [{ text: "unused" }] });
    const hostA = await startHost(redis, model, { name: "host-a", script: "unused", env, args: ["--metrics", "127.0.0.1:0"] });
    await startHost(redis, model, { name: "host-b", script: "unused", env });
    const metricsUrl = (await hostA.waitFor(/metrics for Prometheus at \S+/)).split(" at ")[1]!;
    // Each host runs one task at a time and each task takes a while: both hosts get work.
    const file = await swarmFile([
      "name: traced-fleet",
      "concurrency: 2",
      "tasks:",
      ...[1, 2, 3, 4].map((n) => `  - { name: t${n}, prompt: work ${n} }`),
      "rehearsal:",
      ...[1, 2, 3, 4].map((n) => `  t${n}: [{ text: done ${n}, delay_ms: 1500 }]`),
    ]);
    const out = join(await tempHome("cadre-out-"), "run");
    const run = await runDistributed(file, redis, out, ["--rehearse"], env);
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    const summary = await readSummary(out);
    const ranOn = new Map(summary.tasks.map((t) => [t.name, t.host]));
    expect(new Set(ranOn.values())).toEqual(new Set(["host-a", "host-b"]));

    // The hosts flush each job's spans as it ends; wait for every task's attempt span.
    const attempts = () => receiver.spans.filter((s) => s.attributes["cadre.span"] === "attempt");
    await expect
      .poll(() => new Set(attempts().map((s) => s.attributes["cadre.task"])).size, {
        timeout: 20_000,
        message: "an attempt span of each task from the hosts",
      })
      .toBe(4);
    const { spans } = receiver;
    const runSpan = spans.find((s) => s.name === "run traced-fleet")!;
    expect(runSpan.resource["cadre.role"]).toBe("run");
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([runSpan.traceId]));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const hostsOf = (list: ReceivedSpan[]) => new Set(list.map((s) => s.resource["cadre.host"]));
    expect(hostsOf(attempts())).toEqual(new Set(["host-a", "host-b"]));
    for (const attempt of attempts()) {
      const name = String(attempt.attributes["cadre.task"]);
      // A host's attempt sits under the coordinator's span of its task, which sits under the run.
      const task = byId.get(attempt.parentSpanId)!;
      expect(task.name, name).toBe(`task ${name}`);
      expect(task.resource["cadre.role"]).toBe("run");
      expect(task.parentSpanId).toBe(runSpan.spanId);
      expect(attempt.resource["cadre.host"]).toBe(ranOn.get(name));
      expect(spans.some((s) => s.parentSpanId === attempt.spanId && s.attributes["cadre.span"] === "turn")).toBe(true);
    }

    // Prometheus: the host's metrics in the text format, its tasks counted.
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    const samples = parseExposition(await response.text());
    const counted = samples.filter((s) => s.name === "cadre_tasks_total").reduce((sum, s) => sum + s.value, 0);
    expect(counted).toBe([...ranOn.values()].filter((h) => h === "host-a").length);
    expect(samples.find((s) => s.name === "cadre_tasks_total")?.labels).toMatchObject({ cadre_status: "succeeded", cadre_host: "host-a" });
    expect(samples.some((s) => s.name === "cadre_task_duration_seconds_bucket" || s.name === "cadre_task_duration_bucket")).toBe(true);
  }, 120_000);
});
