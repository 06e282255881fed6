// runSwarm's rules of the graph, in milliseconds and without a process: skips, `when:`, maps, loops, carry-over and
// interrupts against an in-memory TaskRunner. The same rules on the real CLI are in runner.test.ts and map-loop.test.ts.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import type { TaskResult, TaskRunner, TaskSpec } from "../../src/orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import type { LoopEndedEvent } from "../../src/swarm/loop.ts";
import { type CarryDecision, runSwarm, type SwarmEvent } from "../../src/swarm/runner.ts";
import { result, settledOf } from "../support/swarm.ts";

async function swarm(config: object): Promise<ResolvedSwarmConfig> {
  const parsed = await parseSwarmConfig(JSON.stringify(config), { baseDir: tmpdir(), env: {}, format: "json" });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.config;
}

/** A TaskRunner in memory: each task's result is what `answer` says for its name and prompt; it remembers what it was asked. */
class MemoryRunner implements TaskRunner {
  readonly asked: TaskSpec[] = [];
  constructor(readonly answer: (name: string, prompt: string) => Partial<TaskResult> = () => ({})) {}

  async run(spec: TaskSpec): Promise<TaskResult> {
    this.asked.push(spec);
    const name = spec.name ?? "";
    const extra = this.answer(name, spec.prompt);
    return result(name, extra.status ?? "succeeded", { text: `${name} done`, ...extra });
  }

  prompt(name: string): string | undefined {
    return this.asked.find((spec) => spec.name === name)?.prompt;
  }
}

async function drive(
  config: ResolvedSwarmConfig,
  runner: TaskRunner,
  options: { signal?: AbortSignal; carryOver?: (name: string) => CarryDecision | undefined } = {},
) {
  const events: SwarmEvent[] = [];
  const carryOver = options.carryOver;
  for await (const event of runSwarm({
    config,
    orchestrator: runner,
    signal: options.signal ?? new AbortController().signal,
    ...(carryOver && { carryOver: (task) => carryOver(task.name) }),
  }))
    events.push(event);
  const settled = settledOf(events);
  const of = (name: string) => settled.find((e) => e.task.name === name);
  return { events, settled, of, status: (name: string) => of(name)?.result.status, code: (name: string) => of(name)?.result.error?.code };
}

describe("the graph's rules, in memory", () => {
  it("runs in dependency order with results filled in, and skips what waits on a failure without handing it to the runner", async () => {
    const config = await swarm({
      tasks: [
        { name: "first", prompt: "hi" },
        { name: "broken", prompt: "hi" },
        { name: "after-broken", prompt: "use {{results.broken}}", depends_on: ["broken"] },
        { name: "after-skipped", prompt: "later", depends_on: ["after-broken"] },
        { name: "after-first", prompt: "use {{results.first}}", depends_on: ["first"] },
      ],
    });
    const runner = new MemoryRunner((name) => (name === "broken" ? { status: "failed", error: { code: "X", message: "no" } } : {}));
    const run = await drive(config, runner);
    expect(run.settled.map((e) => e.task.name).sort()).toEqual(["after-broken", "after-first", "after-skipped", "broken", "first"]);
    expect(runner.asked.map((spec) => spec.name).sort()).toEqual(["after-first", "broken", "first"]);
    expect(runner.prompt("after-first")).toBe("use first done");
    expect([run.status("after-broken"), run.code("after-broken"), run.of("after-broken")?.started]).toEqual(["skipped", "DEPENDENCY_FAILED", false]);
    // A skip that came of a failure is no skip on purpose: it goes on down the graph as one.
    expect(run.of("after-skipped")?.result).toMatchObject({
      status: "skipped",
      error: { code: "DEPENDENCY_FAILED", message: 'dependency "after-broken" skipped' },
    });
    // A task is ready (with its fingerprint) before it settles; one the graph settled itself never is.
    const ready = run.events.filter((e) => e.type === "task_ready").map((e) => e.task.name);
    expect(ready.sort()).toEqual(["after-first", "broken", "first"]);
  });

  it("when: runs a task only when its condition holds; failure() runs a handler only after a failure", async () => {
    const config = await swarm({
      tasks: [
        { name: "triage", prompt: "kind?", output_schema: { type: "object", properties: { kind: { type: "string" } }, required: ["kind"] } },
        { name: "fixer", prompt: "fix", depends_on: ["triage"], when: 'results.triage.structured.kind == "bug"' },
        { name: "answerer", prompt: "answer", depends_on: ["triage"], when: 'results.triage.structured.kind == "question"' },
        { name: "after-fixer", prompt: "then", depends_on: ["fixer"] },
        { name: "steady", prompt: "go" },
        { name: "report-steady", prompt: "report", depends_on: ["steady"], when: "failure()" },
        { name: "shaky", prompt: "go" },
        { name: "report-shaky", prompt: "report", depends_on: ["shaky"], when: "failure()" },
      ],
    });
    const runner = new MemoryRunner((name) =>
      name === "triage"
        ? { structuredOutput: { kind: "question" } }
        : name === "shaky"
          ? { status: "failed", error: { code: "X", message: "no" } }
          : {},
    );
    const run = await drive(config, runner);
    expect(run.of("fixer")?.result).toMatchObject({
      status: "skipped",
      error: { code: "CONDITION_FALSE", message: 'when: results.triage.structured.kind == "bug" was false' },
    });
    expect(run.status("answerer")).toBe("succeeded");
    // A skip on purpose goes on down the graph as one: no failure.
    expect([run.status("after-fixer"), run.code("after-fixer")]).toEqual(["skipped", "DEPENDENCY_SKIPPED"]);
    expect([run.status("report-steady"), run.code("report-steady")]).toEqual(["skipped", "CONDITION_FALSE"]);
    expect(run.status("report-shaky")).toBe("succeeded");
  });

  it("a for_each over a result makes one copy per element, and the task as written stands for all of them", async () => {
    const config = await swarm({
      tasks: [
        { name: "plan", prompt: "plan", output_schema: { type: "object", properties: { files: { type: "array" } }, required: ["files"] } },
        { name: "fix", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "Fix {{item}} as {{index}}" },
        { name: "reduce", depends_on: ["fix"], prompt: "All: {{results.fix.all}}" },
      ],
    });
    const runner = new MemoryRunner((name, prompt) => (name === "plan" ? { structuredOutput: { files: ["a.ts", "b.ts"] } } : { text: prompt }));
    const run = await drive(config, runner);
    const added = run.events.filter((e) => e.type === "tasks_added");
    expect(added.map((e) => [e.parent, e.tasks.map((t) => [t.name, t.item])])).toEqual([
      [
        "fix",
        [
          ["fix-0", "a.ts"],
          ["fix-1", "b.ts"],
        ],
      ],
    ]);
    expect(runner.asked.map((spec) => spec.prompt)).toContain("Fix a.ts as 0");
    expect(run.of("fix")?.result).toMatchObject({ status: "succeeded", text: JSON.stringify(["Fix a.ts as 0", "Fix b.ts as 1"]) });
    // The reducer started once every copy had ended, and read them all.
    const all = JSON.parse(runner.prompt("reduce")!.slice("All: ".length)) as { name: string }[];
    expect(all.map((copy) => copy.name)).toEqual(["fix-0", "fix-1"]);
    expect(run.settled.findIndex((e) => e.task.name === "reduce")).toBeGreaterThan(run.settled.findIndex((e) => e.task.name === "fix"));
  });

  it("a loop runs rounds until its condition holds, each round continuing the session before; one that never holds ends at max_rounds", async () => {
    const verdict = { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] };
    const config = await swarm({
      tasks: [
        { name: "write", prompt: "Write." },
        { name: "review", depends_on: ["write"], output_schema: verdict, prompt: "Review {{results.write}}" },
        { name: "draft", prompt: "Draft." },
        { name: "check", depends_on: ["draft"], output_schema: verdict, prompt: "Check" },
      ],
      loops: [
        { name: "haiku", tasks: ["write", "review"], until: "results.review.structured.approved", max_rounds: 5 },
        { name: "never", tasks: ["draft", "check"], until: "results.check.structured.approved", max_rounds: 2 },
      ],
    });
    let reviews = 0;
    const runner = new MemoryRunner((name) => {
      if (name.startsWith("review#")) return { structuredOutput: { approved: ++reviews === 3 } };
      if (name.startsWith("check#")) return { structuredOutput: { approved: false } };
      return { sessionId: `session-${name}` };
    });
    const run = await drive(config, runner);
    const ended = run.events.filter((e): e is LoopEndedEvent => e.type === "loop_ended");
    expect(ended.map((e) => [e.loop, e.status, e.rounds])).toEqual(
      expect.arrayContaining([
        ["haiku", "succeeded", 3],
        ["never", "max_rounds", 2],
      ]),
    );
    const writes = runner.asked.filter((spec) => spec.name?.startsWith("write#"));
    expect(writes.map((spec) => spec.name)).toEqual(["write#1", "write#2", "write#3"]);
    // Round 2 continues round 1's session.
    expect(writes.map((spec) => spec.worker?.resume)).toEqual([undefined, "session-write#1", "session-write#2"]);
    expect(run.status("write")).toBe("succeeded");
  });

  it("a resumed run keeps what still stands without the runner, and runs the rest again in the session it left", async () => {
    const config = await swarm({
      tasks: [
        { name: "kept", prompt: "hi" },
        { name: "again", prompt: "use {{results.kept}}", depends_on: ["kept"] },
      ],
    });
    const runner = new MemoryRunner();
    const run = await drive(config, runner, {
      carryOver: (name) =>
        name === "kept"
          ? { kind: "keep", result: result("kept", "succeeded", { text: "old" }) }
          : { kind: "run", reason: "it failed before", resumeSession: "s-1" },
    });
    expect(run.of("kept")).toMatchObject({ carriedOver: true, started: false, result: { text: "old" } });
    expect(runner.asked.map((spec) => [spec.name, spec.prompt, spec.worker?.resume])).toEqual([["again", "use old", "s-1"]]);
    expect(run.events.find((e) => e.type === "task_rerun")).toMatchObject({
      task: { name: "again" },
      reason: "it failed before",
      resumedSession: "s-1",
    });
  });

  it("an interrupt cancels what waits, and what was running ends as interrupted whatever its worker said", async () => {
    const config = await swarm({
      tasks: [
        { name: "running", prompt: "hi" },
        { name: "waiting", prompt: "later", depends_on: ["running"] },
      ],
    });
    const stop = new AbortController();
    const runner: TaskRunner = {
      run: (spec) =>
        new Promise((resolve) => {
          // The worker dies of the same Ctrl-C: it fails, and the run calls that an interruption.
          stop.signal.addEventListener("abort", () => resolve(result(spec.name ?? "", "failed")));
          stop.abort(new Error("Ctrl-C"));
        }),
    };
    const run = await drive(config, runner, { signal: stop.signal });
    expect(run.of("running")?.result).toMatchObject({ status: "cancelled", error: { code: "INTERRUPTED" } });
    expect(run.of("waiting")).toMatchObject({ started: false, result: { status: "cancelled", error: { code: "INTERRUPTED" } } });
  });
});
