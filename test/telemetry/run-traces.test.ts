// `cadre run` with the standard OTEL_* environment: the real CLI and the scripted model, the official
// exporters sending to a receiver of the test's own, which decodes what they send (JSON and protobuf).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { bin, readSummary, repo } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { ancestors, otlpEnv, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";

/** A swarm with a hook (a policy that denies a command), a peer question, a spawned child and a task that fails. */
const SWARM = [
  "name: traced",
  "concurrency: 2",
  "agents:",
  "  critic: { description: judges plans, prompt: You are the critic. }",
  "hooks:",
  "  PreToolUse:",
  "    - { matcher: Bash, policy: { deny_commands: ['\\brm\\b'] } }",
  "tasks:",
  "  - { name: lead, prompt: SECRET-PROMPT plan and count }",
  "  - { name: broken, prompt: SECRET-PROMPT say hi }",
  "rehearsal:",
  "  lead:",
  "    - tool_use: { name: Bash, input: { command: rm -rf SECRET-INPUT, description: clean up } }",
  "    - tool_use: { name: mcp__cadre__ask_peer, input: { peer: critic, question: Sound? } }",
  "    - tool_use: { name: mcp__cadre__spawn_worker, input: { prompt: count the widgets } }",
  "    - text: all done",
  "  lead/child: [{ text: 7 widgets }]",
  "  peer:critic: [{ text: sound enough }]",
  "  broken:",
  "    - { text: never, fail: { status: 400, times: 3, message: scripted outage } }",
];

async function tracedRun(dir: string, env: Record<string, string>, extra: string[] = []) {
  const file = join(dir, "swarm.yaml");
  await writeFile(file, `${SWARM.join("\n")}\n`);
  const out = join(dir, "out");
  const run = await execa("node", [bin, "run", file, "--rehearse", "--out", out, ...extra], { cwd: repo, reject: false, env });
  return { run, out };
}

const one = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `one span named "${name}" among ${spans.map((s) => s.name).join(", ")}`,
  ).toEqual([name]);
  return found[0]!;
};

describe("cadre run's traces", () => {
  it("one trace per run over OTLP/HTTP JSON: run → task → attempt → turn → tool, the child under its spawn call, tokens and cost as summary.json, no prompt text", async ({
    tmp,
  }) => {
    const receiver = await startOtlpReceiver();
    const { run, out } = await tracedRun(tmp, otlpEnv(receiver, "http/json"));
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/telemetry: cannot export/);
    const summary = await readSummary(out);
    const { spans } = receiver;
    expect([...receiver.contentTypes].every((t) => t.includes("json"))).toBe(true);

    // One trace, whose one root is the run.
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const roots = spans.filter((s) => s.parentSpanId === "");
    expect(roots.map((s) => s.name)).toEqual(["run traced"]);
    const runSpan = roots[0]!;
    expect(runSpan.attributes["cadre.run_id"]).toBe(summary.run_id);
    expect(runSpan.attributes["cadre.cost_usd"]).toBeCloseTo(summary.totals.cost_usd, 9);
    expect(runSpan.resource["service.name"]).toBe("cadre");

    // A task span per task, under the run span, with the record's tokens and cost.
    for (const task of summary.tasks) {
      const span = one(spans, `task ${task.name}`);
      expect(span.parentSpanId, task.name).toBe(runSpan.spanId);
      expect(span.attributes["cadre.task"]).toBe(task.name);
      expect(span.attributes["cadre.cost_usd"]).toBe(task.cost_usd);
      expect(span.attributes["gen_ai.usage.input_tokens"]).toBe(task.usage.input_tokens);
      expect(span.attributes["gen_ai.usage.output_tokens"]).toBe(task.usage.output_tokens);
      expect(span.attributes["gen_ai.usage.cache_read.input_tokens"]).toBe(task.usage.cache_read_input_tokens);
      expect(span.attributes["gen_ai.usage.cache_creation.input_tokens"]).toBe(task.usage.cache_creation_input_tokens);
      expect(span.attributes["cadre.status"]).toBe(task.status);
    }
    const lead = one(spans, "task lead");
    expect(lead.status).toBe(1);
    expect(lead.attributes["gen_ai.conversation.id"]).toBe(summary.tasks.find((t) => t.name === "lead")!.session_id);
    // The failed task: error status and its error code.
    const broken = one(spans, "task broken");
    const brokenRecord = summary.tasks.find((t) => t.name === "broken")!;
    expect(brokenRecord.status).toBe("failed");
    expect(broken.status).toBe(2);
    expect(broken.attributes["error.type"]).toBe(brokenRecord.error!.code);

    // Queue wait, attempt, turns and tools under their task.
    const under = (span: ReceivedSpan, ancestor: ReceivedSpan) => ancestors(spans, span).some((a) => a.spanId === ancestor.spanId);
    const leadSpans = spans.filter((s) => under(s, lead));
    const kinds = (list: ReceivedSpan[]) => list.map((s) => s.attributes["cadre.span"]);
    expect(kinds(leadSpans)).toEqual(expect.arrayContaining(["queue", "attempt", "turn", "tool", "hook", "peer_turn", "task"]));
    const turns = leadSpans.filter((s) => s.attributes["cadre.span"] === "turn" && s.attributes["cadre.task"] === "lead");
    expect(turns.length).toBe(4);
    for (const turn of turns) {
      expect(turn.attributes["gen_ai.system"]).toBe("anthropic");
      expect(turn.attributes["gen_ai.request.model"]).toEqual(expect.any(String));
      expect(spans.find((s) => s.spanId === turn.parentSpanId)?.name).toBe("attempt 1");
    }
    const tool = (name: string) => leadSpans.find((s) => s.attributes["gen_ai.tool.name"] === name && s.attributes["cadre.span"] === "tool")!;
    for (const name of ["Bash", "mcp__cadre__ask_peer", "mcp__cadre__spawn_worker"]) {
      expect(tool(name), name).toBeDefined();
      expect(turns.map((t) => t.spanId)).toContain(tool(name).parentSpanId);
    }
    // The hook's decision under the Bash call it denied; the peer's answer under the question.
    const hook = one(spans, "hook PreToolUse");
    expect(hook.parentSpanId).toBe(tool("Bash").spanId);
    expect(hook.attributes).toMatchObject({ "cadre.hook.action": "policy", "cadre.hook.decision": "deny" });
    const peer = one(spans, "peer critic");
    expect(peer.parentSpanId).toBe(tool("mcp__cadre__ask_peer").spanId);
    expect(peer.links).toEqual([{ traceId: lead.traceId, spanId: tool("mcp__cadre__ask_peer").spanId }]);
    const peerRecord = summary.sessions.find((s) => s.role === "peer")!;
    expect(peer.attributes["cadre.cost_usd"]).toBe(peerRecord.cost_usd);
    expect(peer.attributes["gen_ai.conversation.id"]).toBe(peerRecord.session_id);
    // The child under the tool call that spawned it, with its own turns.
    const child = one(spans, "task lead/child");
    expect(child.parentSpanId).toBe(tool("mcp__cadre__spawn_worker").spanId);
    expect(child.attributes["cadre.cost_usd"]).toBe(summary.sessions.find((s) => s.role === "child")!.cost_usd);
    expect(spans.some((s) => s.attributes["cadre.span"] === "turn" && s.attributes["cadre.task"] === "lead/child")).toBe(true);

    // Neither prompts nor tool inputs leave without the opt-in.
    expect(receiver.raw.join("\n")).not.toMatch(/SECRET-PROMPT|SECRET-INPUT/);
    // Metrics leave too, on the same endpoint.
    expect([...receiver.metrics]).toEqual(
      expect.arrayContaining(["cadre.tasks", "cadre.task.duration", "cadre.queue.duration", "cadre.tokens", "cadre.cost"]),
    );
  }, 120_000);

  it("sends protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says so, and prompts and tool inputs with --otel-content", async ({ tmp }) => {
    const receiver = await startOtlpReceiver();
    const { run, out } = await tracedRun(tmp, otlpEnv(receiver, "http/protobuf"), ["--otel-content"]);
    expect(run.exitCode, run.stderr).toBe(1);
    expect([...receiver.contentTypes]).toEqual(["application/x-protobuf"]);
    const summary = await readSummary(out);
    const { spans } = receiver;
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const runSpan = one(spans, "run traced");
    for (const task of summary.tasks) expect(one(spans, `task ${task.name}`).parentSpanId).toBe(runSpan.spanId);
    expect(one(spans, "task broken").status).toBe(2);
    expect(one(spans, "task lead").attributes["cadre.prompt"]).toBe("SECRET-PROMPT plan and count");
    const bash = spans.find((s) => s.attributes["gen_ai.tool.name"] === "Bash" && s.attributes["cadre.span"] === "tool")!;
    expect(JSON.parse(String(bash.attributes["gen_ai.tool.call.arguments"]))).toMatchObject({ command: "rm -rf SECRET-INPUT" });
  }, 120_000);

  it("a resumed run is a trace of its own whose run span links to the earlier attempt's", async ({ tmp }) => {
    const receiver = await startOtlpReceiver();
    const env = otlpEnv(receiver, "http/json");
    const { run, out } = await tracedRun(tmp, env);
    expect(run.exitCode, run.stderr).toBe(1);
    const resumed = await execa("node", [bin, "run", join(tmp, "swarm.yaml"), "--rehearse", "--resume", out], { cwd: repo, reject: false, env });
    expect(resumed.exitCode, resumed.stderr).toBe(1);
    const summary = await readSummary(out);
    expect(summary.attempt).toBe(2);
    const runs = receiver.spans.filter((span) => span.name === "run traced");
    expect(runs).toHaveLength(2);
    const [first, second] = [runs.find((span) => span.links.length === 0)!, runs.find((span) => span.links.length > 0)!];
    expect(second.traceId).not.toBe(first.traceId);
    expect(second.links).toEqual([{ traceId: first.traceId, spanId: first.spanId }]);
    // The record keeps both, as W3C traceparents: the next resume links to each.
    expect(summary.traces).toEqual([`00-${first.traceId}-${first.spanId}-01`, `00-${second.traceId}-${second.spanId}-01`]);
  });

  it("a posted task's span names the task that posted it and how deep, as its summary.json row; so does a resumed run's, carried over", async ({
    tmp,
  }) => {
    const receiver = await startOtlpReceiver();
    const env = otlpEnv(receiver, "http/json");
    const out = join(tmp, "out");
    const posted = (...args: string[]) =>
      execa("node", [bin, "run", join(repo, "examples", "posted-tasks.yaml"), "--rehearse", ...args], { cwd: tmp, reject: false, env });
    const first = await posted("--out", out);
    expect(first.exitCode, first.stderr).toBe(0);
    const resumed = await posted("--resume", out);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.filter((task) => task.posted_by !== undefined)).toHaveLength(3);
    const traces = [...new Set(receiver.spans.map((span) => span.traceId))];
    expect(traces).toHaveLength(2);
    for (const [attempt, trace] of traces.entries()) {
      for (const task of summary.tasks) {
        const span = one(
          receiver.spans.filter((s) => s.traceId === trace),
          `task ${task.name}`,
        );
        expect(span.attributes["cadre.posted_by"], task.name).toBe(task.posted_by);
        expect(span.attributes["cadre.post_depth"], task.name).toBe(task.post_depth);
        // The second attempt ran nothing: every task, posted ones included, was carried over.
        expect(span.attributes["cadre.carried_over"], task.name).toBe(attempt === 1 ? true : undefined);
      }
    }
  }, 120_000);

  it("an endpoint that cannot be reached costs one line, and the run goes on", async ({ tmp }) => {
    // A port nobody listens on: the receiver is started and closed at once.
    const closed = await startOtlpReceiver();
    const { run, out } = await tracedRun(tmp, { ...otlpEnv(closed, "http/json"), OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(run.exitCode, run.stderr).toBe(1);
    expect((await readSummary(out)).tasks.map((t) => t.status)).toEqual(["succeeded", "failed"]);
    expect(run.stderr.match(/telemetry: cannot export/g)).toHaveLength(1);
  }, 120_000);
});
