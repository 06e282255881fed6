// summary.json is written a row at a time (a long run's record is never in memory whole), and its
// text is exactly that of the record written whole: the same bytes, whatever the record holds.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TaskResult } from "../../src/orchestrator/index.ts";
import { buildSummary, type SummaryInput, writeSummarySync } from "../../src/run/index.ts";
import type { ResolvedSwarmConfig } from "../../src/swarm/index.ts";
import { tempHome } from "../support/rehearsal.ts";
import { resolvedConfig, result as resultOf, T0 } from "../support/swarm.ts";

const usage = { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 900, cacheCreationInputTokens: 50 };

/** A result whose text and answer try JSON's escapes and nesting. */
function result(name: string, status: TaskResult["status"], extra: Partial<TaskResult> = {}): TaskResult {
  return resultOf(name, status, {
    text: `${name}: 🙂 "quoted"\nand a second line`,
    structuredOutput: { verdict: "ok", items: [1, { deep: ["x"] }], empty: {}, none: [] },
    usage,
    sessionId: `session-${name}`,
    ...extra,
  });
}

/** A record with every kind of row and section: ended, running and pending tasks, a carried-over row, sessions, a loop, traces. */
function fullInput(dir: string): SummaryInput {
  const config = resolvedConfig("everything", ["plan", "write", "review", "later", "kept"], {
    file: "/x/swarm.yaml",
    loops: [{ name: "polish", tasks: ["write", "review"], until: { source: 'results.review.text == "ok"' }, max_rounds: 3 }],
  } as Partial<ResolvedSwarmConfig>);
  return {
    config,
    added: [{ name: "write#2", template: "write", depends_on: ["plan"], round_of: { task: "write", round: 2, loop: "polish" } }],
    results: new Map([
      ["plan", result("plan", "succeeded")],
      ["write", result("write", "failed", { error: { code: "X", message: "it broke ✗" } })],
      ["kept", result("kept", "succeeded")],
    ]),
    running: new Map([["review", { startedAt: T0 + 100, sessionId: "s-review" }]]),
    fingerprints: new Map([["plan", { prompt: "a", settings: "b", inputs: {} }]]) as unknown as SummaryInput["fingerprints"],
    carriedOver: new Map([["kept", buildSummary(minimalInput(dir)).tasks[0]!]]),
    attempt: 2,
    previous: {
      totals: buildSummary(minimalInput(dir)).totals,
      sessions: [
        {
          role: "peer",
          name: "peer:old",
          agent: null,
          parent: null,
          session_id: null,
          cost_usd: 0,
          usage: {},
          num_turns: 0,
          status: null,
          transcript: null,
        },
      ],
    } as unknown as SummaryInput["previous"],
    totals: { costUsd: 0.05, usage },
    sessions: [
      { id: "p1", role: "peer", name: "peer:critic", agent: "critic", parent: "write", sessionId: "s-peer", costUsd: 0.005, usage, numTurns: 1 },
    ],
    transcripts: new Map([["plan", join(dir, "transcripts", "plan.jsonl")]]),
    hosts: new Map([["plan", "host-a"]]),
    worktrees: new Map(),
    runId: "20261126-120000-abcd",
    outDir: dir,
    rehearsal: false,
    budgetUsd: 5,
    startedAt: T0,
    finishedAt: T0 + 9000,
    traces: ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"],
    stop: { reason: "SIGINT", exitCode: 130 },
  };
}

function minimalInput(dir: string): SummaryInput {
  return {
    config: resolvedConfig("one", ["kept"]),
    results: new Map([["kept", result("kept", "succeeded")]]),
    totals: { costUsd: 0.0125, usage },
    sessions: [],
    transcripts: new Map(),
    worktrees: new Map(),
    runId: "r1",
    outDir: dir,
    rehearsal: true,
    budgetUsd: undefined,
    startedAt: T0,
    finishedAt: T0 + 1000,
    stop: undefined,
  } as unknown as SummaryInput;
}

describe("writeSummarySync", () => {
  it("writes, row by row, the very text of the whole record: every section, no tasks, and many tasks", async () => {
    const dir = await tempHome("cadre-write-summary-");
    const many = minimalInput(dir);
    many.config = resolvedConfig(
      "many",
      Array.from({ length: 3_000 }, (_, i) => `t${i}`),
    );
    many.results = new Map(many.config.tasks.slice(0, 2_000).map((t) => [t.name, result(t.name, "succeeded")]));
    const empty = { ...minimalInput(dir), config: { ...minimalInput(dir).config, tasks: [] }, results: new Map() };
    for (const input of [fullInput(dir), minimalInput(dir), empty, many]) {
      const { path, bytes } = writeSummarySync(dir, input);
      const text = await readFile(path, "utf8");
      expect(text).toBe(`${JSON.stringify(buildSummary(input), null, 2)}\n`);
      expect(bytes).toBe(Buffer.byteLength(text));
    }
    // The full record has each section, so the comparison above covered them.
    const full = buildSummary(fullInput(dir));
    expect(full.tasks.map((row) => [row.name, row.status])).toEqual([
      ["plan", "succeeded"],
      ["write", "failed"],
      ["write#2", "pending"],
      ["review", "running"],
      ["later", "pending"],
      ["kept", "succeeded"],
    ]);
    expect(full.totals).toMatchObject({ tasks: 6, succeeded: 2, failed: 1 });
    expect(full.sessions.map((session) => session.name)).toEqual(["peer:old", "peer:critic"]);
    expect(full.loops?.map((loop) => loop.name)).toEqual(["polish"]);
    expect(full.traces).toHaveLength(1);
  });

  it("says which record it could not write, and leaves the one written before as it was", async () => {
    const dir = await tempHome("cadre-write-summary-");
    writeSummarySync(dir, minimalInput(dir));
    const before = await readFile(join(dir, "summary.json"), "utf8");
    expect(() => writeSummarySync(join(dir, "missing"), minimalInput(dir))).toThrow(/cannot write .*summary\.json/);
    expect(await readFile(join(dir, "summary.json"), "utf8")).toBe(before);
  });
});
