// `cadre run script.js` with the standard OTEL_* environment: a workflow span above a span per phase, each agent()
// call's task span under its phase (under the workflow span when it has none); the real CLI, the scripted model, and
// a receiver of the test's own decoding what the official exporters send.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { bin, readSummary } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { ancestors, otlpEnv, type ReceivedSpan, startOtlpReceiver } from "../support/otlp-receiver.ts";

const SCRIPT = `export const meta = { name: "traced", description: "a traced workflow", phases: [{ title: "Find" }, { title: "Verify" }] }
const warm = await agent("SECRET-PROMPT warm up", { label: "warm" })
phase("Find")
const found = await parallel([() => agent("SECRET-PROMPT find a", { label: "find-a" }), () => agent("SECRET-PROMPT find b", { label: "find-b" })])
const verified = await agent("SECRET-PROMPT verify", { label: "verify", phase: "Verify" })
log("all verified")
return { warm, found, verified }
`;

const REHEARSAL = `warm: [{ text: warmed }]
find-a: [{ tool_use: { name: Bash, input: { command: echo a, description: say a } } }, { text: found a }]
find-b: [{ text: found b }]
verify: [{ text: verified }]
`;

describe("a workflow run's traces", () => {
  it("workflow → phase → task → attempt → turn, with each call's label, phase, status and cost as summary.json; no prompt text", async ({ tmp }) => {
    await writeFile(join(tmp, "traced.js"), SCRIPT);
    await writeFile(join(tmp, "traced.rehearsal.yaml"), REHEARSAL);
    const receiver = await startOtlpReceiver();
    const out = join(tmp, "out");
    const run = await execa("node", [bin, "run", "traced.js", "--rehearse", "--out", out], {
      cwd: tmp,
      reject: false,
      env: otlpEnv(receiver, "http/protobuf"),
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/telemetry: cannot export/);
    const summary = await readSummary(out);
    const { spans } = receiver;
    const one = (name: string): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name);
      expect(found, `one span "${name}" among ${spans.map((s) => s.name).join(", ")}`).toHaveLength(1);
      return found[0]!;
    };

    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const roots = spans.filter((s) => s.parentSpanId === "");
    expect(roots.map((s) => s.name)).toEqual(["workflow traced"]);
    const root = roots[0]!;
    expect(root.attributes).toMatchObject({
      "cadre.span": "workflow",
      "cadre.workflow": "traced",
      "cadre.run_id": summary.run_id,
      "cadre.workflow.agents": 4,
      "cadre.exit_code": 0,
    });
    expect(root.attributes["cadre.cost_usd"]).toBeCloseTo(summary.totals.cost_usd, 9);

    const find = one("phase Find");
    const verify = one("phase Verify");
    for (const phase of [find, verify]) {
      expect(phase.parentSpanId).toBe(root.spanId);
      expect(phase.attributes["cadre.span"]).toBe("phase");
    }
    const parentOf = { warm: root, "find-a": find, "find-b": find, verify };
    for (const row of summary.tasks) {
      const span = one(`task ${row.name}`);
      expect(span.parentSpanId, row.name).toBe(parentOf[row.name as keyof typeof parentOf].spanId);
      expect(span.attributes).toMatchObject({
        "cadre.span": "task",
        "cadre.workflow.label": row.label,
        "cadre.status": row.status,
        "cadre.cost_usd": row.cost_usd,
        "gen_ai.usage.output_tokens": row.usage.output_tokens,
        "gen_ai.conversation.id": row.session_id,
      });
      expect(span.attributes["cadre.phase"]).toBe(row.phase ?? undefined);
    }
    // Inside a call's task: its attempt, turns and the tool it used, as a swarm task's.
    const findA = one("task find-a");
    const inside = spans.filter((s) => ancestors(spans, s).some((a) => a.spanId === findA.spanId)).map((s) => s.attributes["cadre.span"]);
    expect(inside).toEqual(expect.arrayContaining(["queue", "attempt", "turn", "tool"]));

    // Content is off: no prompt reaches a span.
    expect(receiver.raw.join("\n")).not.toContain("SECRET-PROMPT");
    expect(receiver.raw.join("\n")).toContain("find-a");

    // Resumed, every call replays from the record: each has a span under its phase that says so, with nothing under it.
    const again = await startOtlpReceiver();
    const resumed = await execa("node", [bin, "run", "traced.js", "--rehearse", "--resume", out], {
      cwd: tmp,
      reject: false,
      env: otlpEnv(again, "http/protobuf"),
    });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const replayed = again.spans;
    const [workflow] = replayed.filter((s) => s.parentSpanId === "");
    // Each attempt has a run id of its own (as a swarm's): its worktrees' branches never meet the earlier attempt's.
    const resumedRecord = await readSummary(out);
    expect(workflow).toMatchObject({ name: "workflow traced", attributes: { "cadre.attempt": 2, "cadre.run_id": resumedRecord.run_id } });
    const phases = new Map(replayed.filter((s) => s.attributes["cadre.span"] === "phase").map((s) => [s.spanId, s.attributes["cadre.phase"]]));
    const tasks = replayed.filter((s) => s.attributes["cadre.span"] === "task");
    expect(
      tasks
        .map((s) => [
          s.name,
          phases.get(s.parentSpanId) ?? (s.parentSpanId === workflow!.spanId ? "(workflow)" : s.parentSpanId),
          s.attributes["cadre.carried_over"],
        ])
        .sort(),
    ).toEqual([
      ["task find-a", "Find", true],
      ["task find-b", "Find", true],
      ["task verify", "Verify", true],
      ["task warm", "(workflow)", true],
    ]);
    expect(replayed.filter((s) => tasks.some((t) => t.spanId === s.parentSpanId))).toEqual([]);
  });
});
