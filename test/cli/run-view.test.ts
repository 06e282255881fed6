// The views of `cadre run`, rendered from states built of orchestrator events (no processes).
import { describe, expect, it } from "vitest";
import { renderFinalTable } from "../../src/cli/run/final-table.ts";
import { parseRunArgs, runDirName } from "../../src/cli/run/options.ts";
import { scriptFinalLines, scriptLine } from "../../src/cli/run/script.ts";
import { colorsFor } from "../../src/cli/run/view/format.ts";
import { describeEvent, LinesView } from "../../src/cli/run/view/lines.ts";
import { renderFrame } from "../../src/cli/run/view/tty.ts";
import { SIGNAL_EXIT_CODES, type StopSignal } from "../../src/cli/signals.ts";
import type { OrchestratorEvent, TaskInfo } from "../../src/orchestrator/index.ts";
import { parseCliMessage } from "../../src/protocol/index.ts";
import { buildSummary, exitCodeFor, type RunEvent, RunModel, type Summary, type SummaryInput } from "../../src/run/index.ts";
import { resolvedConfig, result, T0 } from "../support/swarm.ts";

const ESC = "\u001b";
const plain = colorsFor({ isTTY: false }, {});
const colored = colorsFor({ isTTY: true }, { TERM: "xterm" });

const info = (name: string, id = name, parentId?: string): TaskInfo => ({ id, name, agent: "reviewer", parentId });

/** The run's read-model, as `cadre run` makes it for a swarm. */
const newState = (
  title: string,
  tasks: { name: string; agent?: string; depends_on?: string[] }[],
  startedAt: number,
  budgetUsd?: number,
  costSimulated = false,
) => new RunModel({ title, mode: "swarm", tasks, startedAt, budgetUsd, costSimulated });

const assistant = (id: string, content: unknown[]) =>
  parseCliMessage({ type: "assistant", message: { id, role: "assistant", content }, session_id: "s" });

/** Three tasks: a finished one, a running one mid tool call, and one waiting on the other two. */
function sampleState(): RunModel {
  const state = newState(
    "review",
    [
      { name: "a.ts", agent: "reviewer" },
      { name: "b.ts", agent: "reviewer" },
      { name: "summary", depends_on: ["a.ts", "b.ts"] },
    ],
    T0,
    2,
  );
  const events: [number, OrchestratorEvent][] = [
    [0, { type: "task_queued", task: info("a.ts") }],
    [0, { type: "task_queued", task: info("b.ts") }],
    [500, { type: "task_started", task: info("a.ts"), attempt: 1, pid: 10, worker: "cold", startedAt: T0 + 500 }],
    [600, { type: "task_started", task: info("b.ts"), attempt: 1, pid: 11, worker: "cold", startedAt: T0 + 600 }],
    [
      900,
      {
        type: "task_message",
        task: info("b.ts"),
        message: assistant("m1", [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "code/b.ts" } }]),
      },
    ],
    // The CLI sends one model reply as several messages with the same id: still one turn.
    [950, { type: "task_message", task: info("b.ts"), message: assistant("m1", [{ type: "text", text: "reading" }]) }],
    [
      1000,
      {
        type: "cost",
        task: info("a.ts"),
        taskUsd: 0.0125,
        totalUsd: 0.0125,
        totalUsage: { inputTokens: 60, outputTokens: 10, cacheReadInputTokens: 900, cacheCreationInputTokens: 40 },
      },
    ],
    [4700, { type: "task_finished", task: info("a.ts"), result: result("a.ts", "succeeded") }],
    [4800, { type: "rate_limit", state: { limit: 4, effectiveLimit: 2, backoffUntil: T0 + 7800, rateLimited: true } }],
  ];
  for (const [at, event] of events) state.apply(event, T0 + at);
  return state;
}

/** A stop by a signal, as the CLI gives it to the run layer. */
const stopBy = (signal: StopSignal) => ({ reason: signal, exitCode: SIGNAL_EXIT_CODES[signal] });

const visible = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "");

describe("the live view's frame", () => {
  it("shows one row per task (state, queued, run time, turns, cost, activity), the totals and the rate-limit state", () => {
    const frame = renderFrame(sampleState(), { now: T0 + 5800, width: 100, height: 30, colors: plain });
    expect(frame).not.toContain(ESC);
    const lines = frame.split("\n");
    expect(lines[0]).toBe("cadre review  1/3 done  5.8s");
    expect(lines[1]).toMatch(/^task +status +queued +time +turns +cost +activity$/);
    expect(lines[2]).toMatch(/^✔ a\.ts +succeeded +500ms +4\.2s +2 turns +\$0\.01 +a\.ts is fine$/);
    expect(lines[3]).toMatch(/^▶ b\.ts +running +600ms +5\.2s +1 turn +“reading”$/);
    expect(lines[4]).toMatch(/^· summary +waiting +after a\.ts, b\.ts$/);
    expect(lines[5]).toBe("1 running  1 waiting  1 succeeded  $0.01 of $2.00  90% cached   rate limited: 2/4 workers, starts paused 2.0s");
    expect(lines).toHaveLength(6);
  });

  it("shows a task name and a reply that carry escape sequences as text: the terminal never obeys them", () => {
    const hostile = "\u001b]0;OWNED\u0007\u001b[2J";
    const state = newState("swarm", [{ name: `evil${hostile}` }], T0);
    const task = info(`evil${hostile}`);
    state.apply({ type: "task_started", task, attempt: 1, pid: 1, worker: "cold", startedAt: T0 }, T0);
    state.apply({ type: "task_message", task, message: assistant("m1", [{ type: "text", text: `pwned ${hostile}` }]) }, T0);
    const frame = renderFrame(state, { now: T0 + 100, width: 120, height: 30, colors: plain });
    expect(frame).not.toContain(ESC);
    expect(frame).not.toContain("\u0007");
    expect(frame).toContain("evil\\x1b]0;OWNED\\x07\\x1b[2J");
    // The plain lines (a pipe, CI): what reaches the stream.
    const written: string[] = [];
    const lines = new LinesView({ write: (text: string) => written.push(text) > 0 }, state, () => T0);
    lines.event({ type: "task_finished", task, result: result(`evil${hostile}`, "succeeded", { text: `done ${hostile}` }) });
    lines.notice(`swarm ${hostile}`);
    expect(written).toHaveLength(2);
    for (const text of written) expect(text).not.toContain(ESC);
  });

  it("prints a script's log, phase, labels and error, a title and a task name with a newline as one line each, escapes as text", () => {
    const hostile = "\u001b]0;OWNED\u0007\u001b[2J\n12:00:00 forged: succeeded";
    const state = newState(`script${hostile}`, [{ name: `item${hostile}` }], T0);
    const frame = renderFrame(state, { now: T0 + 100, width: 200, height: 30, colors: plain });
    expect(frame).not.toContain(ESC);
    expect(frame.split("\n").filter((line) => line.includes("forged"))).toHaveLength(2);
    const written: string[] = [];
    const lines = new LinesView({ write: (text: string) => written.push(text) > 0 }, state, () => T0);
    lines.event({ type: "task_started", task: info(`item${hostile}`), attempt: 1, pid: 1, worker: "cold", startedAt: T0 });
    for (const event of [
      { type: "workflow_log", message: `said ${hostile}` },
      { type: "workflow_phase", title: `phase ${hostile}`, workflow: undefined },
    ] as const)
      lines.notice(scriptLine(event)!);
    const final = scriptFinalLines({
      tasks: [{ name: "a", label: `label ${hostile}`, phase: `phase ${hostile}`, status: "succeeded" }],
      error: { message: `boom ${hostile}` },
    } as unknown as Summary);
    for (const text of [...written, ...final.map((line) => `${line}\n`)]) {
      expect(text).not.toContain(ESC);
      expect(text.indexOf("\n")).toBe(text.length - 1);
    }
    expect(written).toHaveLength(3);
    expect(final).toHaveLength(2);
  });

  it("counts a task's time from its start, with its wait for a slot apart: the orchestrator's numbers", () => {
    const state = newState("slots", [{ name: "late" }], T0);
    state.apply({ type: "task_queued", task: info("late") }, T0);
    const row = (now: number) => renderFrame(state, { now, width: 100, height: 30, colors: plain }).split("\n")[2];
    expect(row(T0 + 2000)).toMatch(/^○ late +queued +2\.0s +$/);
    // It took a slot at 3 s; the event comes once its worker is up, and the clock counts from the slot.
    state.apply({ type: "task_started", task: info("late"), attempt: 1, pid: 1, worker: "cold", startedAt: T0 + 3000 }, T0 + 3600);
    expect(row(T0 + 5000)).toMatch(/^▶ late +running +3\.0s +2\.0s +starting$/);
    const done = result("late", "succeeded", { queuedMs: 3000, startedAt: T0 + 3000, finishedAt: T0 + 5500, durationMs: 2500 });
    state.apply({ type: "task_finished", task: info("late"), result: done }, T0 + 5600);
    expect(row(T0 + 9000)).toMatch(/^✔ late +succeeded +3\.0s +2\.5s +2 turns/);
  });

  it("marks a rehearsal's costs as simulated", () => {
    const state = newState("rehearsed", [{ name: "a" }], T0, undefined, true);
    state.apply({ type: "task_finished", task: info("a"), result: result("a", "succeeded") }, T0 + 5000);
    state.apply({ type: "cost", task: info("a"), taskUsd: 0.0125, totalUsd: 0.0125, totalUsage: result("a", "succeeded").usage }, T0 + 5000);
    const lines = renderFrame(state, { now: T0 + 6000, width: 100, height: 30, colors: plain }).split("\n");
    expect(lines[2]).toMatch(/ ~\$0\.01 +a is fine$/);
    expect(lines[3]).toMatch(/^1 succeeded {2}~\$0\.01 \(simulated\) /);
  });

  it("shows the latest tool call as the activity", () => {
    const state = sampleState();
    state.apply(
      {
        type: "task_message",
        task: info("b.ts"),
        message: assistant("m2", [{ type: "tool_use", id: "t2", name: "mcp__cadre__ask_peer", input: { peer: "critic", question: "ok?" } }]),
      },
      T0 + 5000,
    );
    const frame = renderFrame(state, { now: T0 + 5800, width: 100, height: 30, colors: plain });
    expect(frame.split("\n")[3]).toMatch(/2 turns +ask_peer critic: ok\?$/);
  });

  it("colors by status unless told not to, and never runs past the terminal's width", () => {
    const state = sampleState();
    const frame = renderFrame(state, { now: T0 + 5800, width: 60, height: 30, colors: colored });
    expect(frame).toContain(`${ESC}[32m✔ a.ts`);
    for (const line of frame.split("\n").slice(1, -1)) expect(visible(line).length).toBeLessThanOrEqual(60);
    expect(colorsFor({ isTTY: true }, { TERM: "xterm", NO_COLOR: "1" }).green("x")).toBe("x");
    expect(colorsFor({ isTTY: false }, { FORCE_COLOR: "1" }).green("x")).toBe(`${ESC}[32mx${ESC}[39m`);
  });

  it("folds rows that do not fit the terminal into a count, keeping the running ones", () => {
    const names = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const state = newState(
      "many",
      names.map((name) => ({ name })),
      T0,
    );
    state.apply({ type: "task_started", task: info("t19"), attempt: 1, pid: 1, worker: "cold", startedAt: T0 }, T0);
    const lines = renderFrame(state, { now: T0 + 1000, width: 80, height: 10, colors: plain }).split("\n");
    expect(lines.length).toBeLessThanOrEqual(10);
    expect(lines.some((line) => line.startsWith("▶ t19"))).toBe(true);
    expect(lines).toContain("… 15 more");
  });

  it("puts workers spawned by a task under it and marks the interruption", () => {
    const state = sampleState();
    state.apply({ type: "task_queued", task: info("b.ts/child", "c1", "b.ts") }, T0 + 5000);
    state.interrupted = true;
    const lines = renderFrame(state, { now: T0 + 5800, width: 100, height: 30, colors: plain }).split("\n");
    expect(lines[4]).toMatch(/^ {2}○ b\.ts\/child +queued/);
    expect(lines.at(-1)).toContain("interrupting: finishing up; Ctrl-C again kills the workers");
    // Spawned workers are not counted as tasks of the swarm.
    expect(lines[0]).toContain("1/3 done");
  });
});

describe("a task an agent posted", () => {
  it("is listed with its poster beside its name from the moment it joins the run, and told as a line (its depth past the first)", () => {
    const state = sampleState();
    const post = (name: string, by: string, depth: number): RunEvent => ({
      type: "tasks_added",
      parent: by,
      tasks: [{ name, template: name, agent: "reviewer", depends_on: [], posted: { by, depth }, prompt: "fix it" }],
    });
    state.apply(post("fix-1", "b.ts", 1), T0 + 5000);
    state.apply(post("fix-2", "fix-1", 2), T0 + 5000);
    const lines = renderFrame(state, { now: T0 + 5800, width: 100, height: 30, colors: plain }).split("\n");
    expect(lines.find((line) => line.includes("fix-1"))).toMatch(/^· fix-1 \(by b\.ts\) +waiting +posted$/);
    expect(lines.find((line) => line.includes("fix-2"))).toMatch(/^· fix-2 \(by fix-1\) +waiting +posted$/);
    expect(describeEvent(post("fix-1", "b.ts", 1), state)).toBe("fix-1: posted by b.ts");
    expect(describeEvent(post("fix-2", "fix-1", 2), state)).toBe("fix-2: posted by fix-1 (depth 2)");
  });
});

describe("plain lines", () => {
  it("turn events into one readable line each, and skip the ones only the live view needs", () => {
    const state = sampleState();
    const line = (event: OrchestratorEvent) => describeEvent(event, state);
    expect(line({ type: "task_started", task: info("b.ts"), attempt: 2, pid: 1, worker: "cold", startedAt: T0 })).toBe("b.ts: started (attempt 2)");
    expect(line({ type: "task_finished", task: info("a.ts"), result: result("a.ts", "succeeded") })).toBe(
      "a.ts: succeeded (2 turns, $0.01, 4.2s): a.ts is fine",
    );
    expect(line({ type: "task_finished", task: info("x"), result: result("x", "failed") })).toBe("x: failed (2 turns, $0.01, 4.2s): API error 400");
    const skipped = result("s", "skipped", { attempts: 0, error: { code: "DEPENDENCY_FAILED", message: 'dependency "x" failed' } });
    expect(line({ type: "task_finished", task: info("s"), result: skipped })).toBe('s: skipped: dependency "x" failed');
    const refused = parseCliMessage({
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t", is_error: true, content: "cadre policy denies this Bash command" }],
      },
    });
    expect(line({ type: "task_message", task: info("b.ts"), message: refused })).toBe("b.ts: tool error: cadre policy denies this Bash command");
    expect(line({ type: "task_queued", task: info("b.ts") })).toBeUndefined();
    expect(line({ type: "cost", task: info("b.ts"), taskUsd: 1, totalUsd: 1, totalUsage: result("b.ts", "succeeded").usage })).toBeUndefined();
    expect(line({ type: "budget_exceeded", spentUsd: 2.5, budgetUsd: 2 })).toBe("budget reached: spent $2.50 of $2.00; no new tasks start");
    expect(line({ type: "budget_exceeded", spentUsd: 2.5, budgetUsd: 2, scope: { kind: "agent", name: "reviewer" } })).toBe(
      "budget reached: agent reviewer spent $2.50 of $2.00; its work stops, the rest goes on",
    );
    const resetsAt = new Date(2026, 0, 1, 14, 0).getTime();
    expect(line({ type: "plan_window", state: "waiting", window: "five_hour", utilization: 95, resetsAt, rejected: false })).toBe(
      "waiting for the 5-hour window (resets 14:00): 95 % used, no task starts until then",
    );
    expect(line({ type: "plan_window", state: "resumed", window: "five_hour", utilization: undefined, resetsAt, rejected: false })).toBe(
      "the 5-hour window has reset: tasks start again",
    );
  });
});

describe("the swarm's task_settled events", () => {
  it("show a task that never started as a line and a finished row; a task that ran was shown when it finished", () => {
    const state = sampleState();
    const skipped = result("summary", "skipped", {
      agent: undefined,
      attempts: 0,
      numTurns: 0,
      error: { code: "DEPENDENCY_FAILED", message: 'dependency "b.ts" failed' },
    });
    const event = { type: "task_settled", task: { name: "summary", agent: undefined }, result: skipped, started: false } as const;
    expect(describeEvent(event, state)).toBe('summary: skipped: dependency "b.ts" failed');
    state.apply(event, T0 + 6000);
    expect(state.rows[2]).toMatchObject({ name: "summary", status: "skipped", activity: 'dependency "b.ts" failed', finishedAt: T0 + 6000 });
    expect(state.counts()).toMatchObject({ waiting: 0, skipped: 1 });
    expect(
      describeEvent({ type: "task_settled", task: { name: "a.ts", agent: "reviewer" }, result: result("a.ts", "succeeded"), started: true }, state),
    ).toBeUndefined();
  });
});

describe("summary", () => {
  it("exit code: 0 when all succeeded, 1 when any did not, 128 + the signal's number when a signal stopped the run", () => {
    expect(exitCodeFor([result("a", "succeeded")], undefined)).toBe(0);
    expect(exitCodeFor([result("a", "succeeded"), result("b", "skipped")], undefined)).toBe(1);
    expect(exitCodeFor([result("a", "succeeded")], stopBy("SIGINT"))).toBe(130);
    expect(exitCodeFor([result("a", "succeeded")], stopBy("SIGHUP"))).toBe(129);
    expect(exitCodeFor([result("a", "succeeded")], stopBy("SIGTERM"))).toBe(143);
  });

  /** A run of two tasks (one succeeded, one failed) and a peer, as the engine reports it. */
  const reviewInput = (): SummaryInput => ({
    config: resolvedConfig("review", ["a.ts", "b.ts"]),
    results: new Map([
      [
        "a.ts",
        result("a.ts", "succeeded", { usage: { inputTokens: 100, outputTokens: 10, cacheReadInputTokens: 19_600, cacheCreationInputTokens: 300 } }),
      ],
      ["b.ts", result("b.ts", "failed")],
    ]),
    totals: { costUsd: 0.03, usage: { inputTokens: 250, outputTokens: 25, cacheReadInputTokens: 19_600, cacheCreationInputTokens: 300 } },
    sessions: [
      {
        id: "p1",
        role: "peer",
        name: "peer:critic",
        agent: "critic",
        parent: "a.ts",
        sessionId: "s-peer",
        costUsd: 0.005,
        usage: { inputTokens: 50, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
        numTurns: 1,
        status: undefined,
      },
    ],
    transcripts: new Map([
      ["a.ts", "/out/transcripts/a.ts.jsonl"],
      ["p1", "/out/transcripts/peer_critic.jsonl"],
    ]),
    worktrees: new Map(),
    runId: "20250601-120000-abcd",
    outDir: "/out",
    rehearsal: true,
    budgetUsd: undefined,
    startedAt: T0,
    finishedAt: T0 + 5000,
    stop: undefined,
  });

  it("the final table lists every task and the totals", () => {
    const summary = buildSummary(reviewInput());
    expect(summary.tasks.map((t) => [t.name, t.status, t.transcript])).toEqual([
      ["a.ts", "succeeded", "transcripts/a.ts.jsonl"],
      ["b.ts", "failed", null],
    ]);
    expect(summary.exit_code).toBe(1);
    expect(summary.sessions).toEqual([
      expect.objectContaining({
        role: "peer",
        name: "peer:critic",
        parent: "a.ts",
        session_id: "s-peer",
        transcript: "transcripts/peer_critic.jsonl",
      }),
    ]);
    // What the run spent, and the turns of every task and session listed.
    expect(summary.totals).toMatchObject({
      tasks: 2,
      succeeded: 1,
      failed: 1,
      num_turns: 5,
      usage: { input_tokens: 250, output_tokens: 25, cache_read_input_tokens: 19_600, cache_creation_input_tokens: 300 },
    });
    // a.ts alone read from the cache: its reads as writes less as reads, at the price its cost implies.
    expect(summary.totals.cache_saved_usd).toBeCloseTo((19_600 * (1.25 - 0.1) * 0.0125) / (100 + 1.25 * 300 + 0.1 * 19_600 + 5 * 10), 10);
    expect(summary.tasks[0]!.usage).toMatchObject({ cache_read_input_tokens: 19_600, cache_creation_input_tokens: 300 });
    expect(summary.totals.cost_usd).toBeCloseTo(0.03, 10);
    const table = renderFinalTable(summary, { width: 100, colors: plain }).split("\n");
    expect(table[0]).toMatch(/^task +status +turns +cost +cached +queued +time +result$/);
    // A rehearsal's costs are the scripted model's tokens priced, not money spent: marked as simulated.
    expect(summary.cost_simulated).toBe(true);
    expect(table[1]).toMatch(/^a\.ts +succeeded +2 +~\$0\.01 +98% +500ms +4\.2s +a\.ts is fine$/);
    expect(table[2]).toMatch(/^b\.ts +failed +2 +~\$0\.01 +0% +500ms +4\.2s +API error 400$/);
    expect(table[3]).toMatch(/^ {2}peer:critic +peer +1 +~\$0\.0050 +0% +peer for a\.ts$/);
    // What each agent spent, its peer sessions included.
    expect(table.at(-1)).toBe("by agent  (no agent) ~$0.03, critic ~$0.0050");
    expect(table.at(-2)).toBe("total  1/2 succeeded, 1 failed, 5 turns, ~$0.03 (simulated), 97% of input from cache (saved ~$0.11), 5.0s");
  });

  it("a resumed attempt's record keeps the earlier sessions, and its totals are the earlier attempts' and its own", () => {
    const first = buildSummary(reviewInput());
    const second = buildSummary({ ...reviewInput(), attempt: 2, previous: first });
    expect(second.sessions.map((session) => [session.name, session.carried_over ?? false])).toEqual([
      ["peer:critic", true],
      ["peer:critic", false],
    ]);
    expect(second.totals).toMatchObject({
      cost_usd: first.totals.cost_usd + 0.03,
      num_turns: first.totals.num_turns * 2,
      usage: { input_tokens: 500, output_tokens: 50, cache_read_input_tokens: 39_200, cache_creation_input_tokens: 600 },
    });
    expect(second.totals.cache_saved_usd).toBeCloseTo(first.totals.cache_saved_usd * 2, 10);
    expect(second.attempt_totals).toEqual({ tasks_run: first.attempt_totals!.tasks_run, cost_usd: 0.03 });
  });
});

describe("arguments", () => {
  it("reads the options and defaults the output directory to .cadre/runs/<timestamp>", () => {
    const now = new Date("2025-06-01T12:30:05.123Z");
    expect(runDirName(now)).toBe("2025-06-01T12-30-05Z");
    expect(parseRunArgs(["x.yaml", "--concurrency", "2", "--rehearse", "--json"], now, "/w")).toEqual({
      kind: "run",
      options: {
        kind: "swarm",
        config: "x.yaml",
        concurrency: 2,
        outDir: "/w/.cadre/runs/2025-06-01T12-30-05Z",
        defaultOut: true,
        rehearse: true,
        rehearseBudget: false,
        json: true,
        fresh: false,
        script: { sessionFiles: false },
      },
    });
    expect(parseRunArgs(["x.yaml", "--out", "o"], now, "/w")).toMatchObject({ options: { outDir: "/w/o", defaultOut: false, rehearse: false } });
    expect(parseRunArgs(["x.yaml", "--concurrency", "0"])).toEqual({
      kind: "error",
      message: '--concurrency wants a whole number of at least 1, got "0"',
    });
    expect(parseRunArgs([])).toEqual({ kind: "error", message: "no swarm file or workflow script given" });
    expect(parseRunArgs(["--nope", "x.yaml"]).kind).toBe("error");
  });

  it("one flag table for both kinds of plan: the file picks the kind, and a flag of the other kind is refused by name", () => {
    const now = new Date("2025-06-01T12:30:05.123Z");
    expect(parseRunArgs(["review.js", "--args", '{"a":1}', "--budget", "2k", "--budget-usd", "$0.5", "--max-agents", "3"], now, "/w")).toMatchObject({
      options: { kind: "script", config: "review.js", script: { args: '{"a":1}', budgetTokens: 2_000, budgetUsd: 0.5, maxAgents: 3 } },
    });
    expect(parseRunArgs(["--workflow", "review", "--resume"], now, "/w")).toMatchObject({
      options: { kind: "script", config: "", resume: "", script: { workflow: "review" } },
    });
    expect(parseRunArgs(["review.mjs", "--resume", "--json"], now, "/w")).toMatchObject({ options: { kind: "script", resume: "", json: true } });
    expect(parseRunArgs(["x.yaml", "--args", "{}"])).toEqual({ kind: "error", message: "--args goes with a workflow script, not with x.yaml" });
    expect(parseRunArgs(["review.js", "--fresh", "--resume"])).toEqual({
      kind: "error",
      message: "--fresh goes with a swarm file, not with review.js",
    });
    expect(parseRunArgs(["review.js", "--budget", "lots"]).kind).toBe("error");
    expect(parseRunArgs(["a.js", "b.js"])).toMatchObject({ kind: "error", message: expect.stringContaining('also got "b.js"') });
    expect(parseRunArgs(["--replay", "runs/a", "--args", "{}"], now, "/w")).toMatchObject({ options: { kind: undefined, script: { args: "{}" } } });
  });

  it("--resume wf_<id> continues a Claude Code run: a script, with or without the script file, never a swarm file", () => {
    const now = new Date("2025-06-01T12:30:05.123Z");
    expect(parseRunArgs(["--resume", "wf_1a2b3c4d-567"], now, "/w")).toMatchObject({
      options: { kind: "script", config: "", resume: undefined, resumeClaudeCode: "wf_1a2b3c4d-567" },
    });
    expect(parseRunArgs(["edited.js", "--resume", "wf_1a2b3c4d-567", "--args", "{}"], now, "/w")).toMatchObject({
      options: { kind: "script", config: "edited.js", resumeClaudeCode: "wf_1a2b3c4d-567" },
    });
    expect(parseRunArgs(["x.yaml", "--resume", "wf_1a2b3c4d-567"])).toMatchObject({
      kind: "error",
      message: expect.stringContaining("give no swarm file"),
    });
    expect(parseRunArgs(["review.js", "--resume", "runs/wf_dir"], now, "/w")).toMatchObject({
      options: { resume: "/w/runs/wf_dir", resumeClaudeCode: undefined },
    });
  });

  it("reads --replay with or without a config, and --override and --in-place only beside it", () => {
    expect(parseRunArgs(["--replay", "runs/a"], new Date(), "/w")).toMatchObject({
      options: { config: "", replay: { dir: "/w/runs/a", override: undefined, inPlace: false } },
    });
    expect(parseRunArgs(["c/x.yaml", "--replay", "runs/a", "--override", "o.yaml", "--in-place"], new Date(), "/w")).toMatchObject({
      options: { config: "c/x.yaml", replay: { dir: "/w/runs/a", override: "/w/o.yaml", inPlace: true } },
    });
    expect(parseRunArgs(["x.yaml", "--override", "o.yaml"])).toEqual({ kind: "error", message: "--override goes with --replay" });
    expect(parseRunArgs(["x.yaml", "--replay", "r", "--rehearse"])).toMatchObject({
      kind: "error",
      message: expect.stringContaining("leave out --rehearse"),
    });
    expect(parseRunArgs(["--replay", "r", "--rehearse-budget"]).kind).toBe("run");
  });

  it("reads --resume with or without a run directory, and --fresh only beside it", () => {
    expect(parseRunArgs(["x.yaml", "--resume"], new Date(), "/w")).toMatchObject({ options: { resume: "" } });
    expect(parseRunArgs(["--resume", "x.yaml"], new Date(), "/w")).toMatchObject({ options: { config: "x.yaml", resume: "" } });
    expect(parseRunArgs(["x.yaml", "--resume", "runs/a", "--fresh"], new Date(), "/w")).toMatchObject({
      options: { resume: "/w/runs/a", fresh: true },
    });
    expect(parseRunArgs(["x.yaml", "--fresh"])).toEqual({ kind: "error", message: "--fresh goes with --resume" });
    expect(parseRunArgs(["x.yaml", "--resume", "--out", "o"]).kind).toBe("error");
  });

  it("reads --redis and --run-id; a run id is made up when not given", () => {
    const now = new Date("2025-06-01T12:30:05.123Z");
    expect(parseRunArgs(["x.yaml", "--redis", "redis://q:6379", "--run-id", "r-1"], now)).toMatchObject({
      options: { redis: { url: "redis://q:6379", runId: "r-1", given: true } },
    });
    const made = parseRunArgs(["x.yaml", "--redis", "redis://q:6379"], now);
    expect(made.kind === "run" && made.options.redis?.runId).toMatch(/^2025-06-01T12-30-05Z-[0-9a-f]{6}$/);
    expect(made.kind === "run" && made.options.redis?.given).toBe(false);
    expect(parseRunArgs(["x.yaml", "--run-id", "r-1"])).toEqual({ kind: "error", message: "--run-id goes with --redis" });
    expect(parseRunArgs(["x.yaml", "--redis", "http://q"])).toEqual({
      kind: "error",
      message: "--redis: http://q is not a Redis URL; it must start with redis:// or rediss://",
    });
    expect(parseRunArgs(["x.yaml", "--redis", "redis://q", "--run-id", "a:b"])).toEqual({
      kind: "error",
      message: '--run-id may hold letters, digits, ".", "_" and "-" (at most 80), got "a:b"',
    });
  });

  it("--ui takes an optional HOST:PORT, and serves beyond loopback only with a token", () => {
    const parse = (args: string[], env: Record<string, string> = {}) => parseRunArgs(args, new Date(), "/w", env);
    const loopback = { host: "127.0.0.1", port: 0 };
    expect(parse(["x.yaml", "--ui"])).toMatchObject({ options: { config: "x.yaml", ui: loopback, token: undefined } });
    expect(parse(["--ui", "x.yaml"])).toMatchObject({ options: { config: "x.yaml", ui: loopback } });
    expect(parse(["x.yaml", "--ui", "localhost:8080"])).toMatchObject({ options: { ui: { host: "localhost", port: 8080 } } });
    expect(parse(["x.yaml", "--ui=[::1]:9000"])).toMatchObject({ options: { ui: { host: "::1", port: 9000 } } });
    expect(parse(["x.yaml"])).toMatchObject({ options: { ui: undefined } });
    expect(parse(["x.yaml", "--ui=nonsense"])).toEqual({ kind: "error", message: '--ui wants HOST:PORT (e.g. 127.0.0.1:8787), got "nonsense"' });
    expect(parse(["x.yaml", "--ui", "0.0.0.0:8080"])).toMatchObject({ kind: "error", message: expect.stringContaining("without --token") });
    const token = "a-token-of-sixteen-plus";
    expect(parse(["x.yaml", "--ui", "0.0.0.0:8080", "--token", token])).toMatchObject({ options: { ui: { host: "0.0.0.0", port: 8080 }, token } });
    expect(parse(["x.yaml", "--ui"], { CADRE_UI_TOKEN: token })).toMatchObject({ options: { token } });
    expect(parse(["x.yaml", "--token", token])).toEqual({ kind: "error", message: "--token goes with --ui" });
    expect(parse(["x.yaml", "--ui", "--token", "short"])).toMatchObject({ kind: "error", message: expect.stringContaining("at least 16") });
  });
});
