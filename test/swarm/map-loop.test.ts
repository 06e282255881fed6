// Decisions at run time, on the real CLI with the scripted model: a for_each over a planner's list
// makes one copy per element, and a loop runs its tasks in rounds until its condition holds.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WorkerContext } from "../../src/orchestrator/index.ts";
import { planResume, runSwarmFile } from "../../src/run/index.ts";
import { orchestratorOptionsFor, type ResolvedSwarmConfig } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import type { LoopEndedEvent } from "../../src/swarm/loop.ts";
import { runSwarm, type TasksAddedEvent } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { conversationText, requestsOf } from "../support/requests.ts";
import { collect } from "../support/streams.ts";
import { settledOf } from "../support/swarm.ts";

async function swarm(config: object): Promise<ResolvedSwarmConfig> {
  const result = await parseSwarmConfig(JSON.stringify(config), { baseDir: tmpdir(), env: {}, format: "json" });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.config;
}

/** Every copy plays its task's script; every round its loop task's. */
const scriptOf = (context: WorkerContext) =>
  context.name.startsWith("review#") ? context.name : context.name.replace(/#\d+$/, "").replace(/^(fix|check)-.*$/, "$1");

async function run(config: ResolvedSwarmConfig, scripts: Record<string, unknown[]>) {
  const server = await createRehearsal(scripts as never);
  const { orchestrator } = await rehearsedOrchestrator(server, { ...orchestratorOptionsFor(config), script: scriptOf });
  const events = await collect(runSwarm({ config, orchestrator, signal: new AbortController().signal }));
  const settled = new Map(settledOf(events).map((e) => [e.task.name, e] as const));
  return { server, events, settled, result: (name: string) => settled.get(name)!.result };
}

const structured = (input: unknown) => ({ tool_use: { name: "StructuredOutput", input } });
const FILES = { type: "object", properties: { files: { type: "array" }, name: { type: "string" } }, required: ["files"] };

describe("checks before a token is spent", () => {
  it("reports in one pass, with paths: a loop whose until reads none of its tasks, an unknown loop task, {{previous}} outside a loop, .all of a plain task", async () => {
    const result = await parseSwarmConfig(
      JSON.stringify({
        tasks: [
          { name: "a", prompt: "x {{previous.b}}" },
          { name: "b", prompt: "y {{results.a}}", depends_on: ["a"] },
          { name: "c", prompt: "z {{previous.a}}" },
          { name: "d", prompt: "{{results.a.all}}", depends_on: ["a"], max_items: 3 },
          { name: "m", prompt: "{{item}}", for_each: "{{results.a.structured.files}}", depends_on: ["a"] },
        ],
        loops: [
          { tasks: ["a", "b", "zz"], until: "results.c.text == 'x'", max_rounds: 3 },
          { tasks: ["m"], until: "results.m.text ==", max_rounds: 2 },
        ],
      }),
      { baseDir: tmpdir(), env: {}, format: "json" },
    );
    expect(!result.ok && result.errors.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      "tasks[2].prompt: {{previous.a}} is only filled in for a task in a loop",
      'tasks[3].prompt: {{results.a.all}}: only a for_each over a result has "all" (its copies)',
      "tasks[3].max_items: max_items applies to a for_each over a result",
      'tasks[4].for_each: task "a" has no output_schema, so its result has no structured output',
      'loops[0].tasks[2]: unknown task "zz"',
      "loops[0].until: reads none of the loop's tasks, so it could never change",
      'loops[1].tasks[0]: "m" is a for_each over a result; a loop cannot repeat it',
      "loops[1].until: not a valid expression: Unexpected token: EOF",
    ]);
  });

  it("checks until's fields against the read task's output_schema, as when: is checked", async () => {
    const verdict = { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] };
    const result = await parseSwarmConfig(
      JSON.stringify({
        tasks: [
          { name: "write", prompt: "w" },
          { name: "review", prompt: "r {{results.write}}", depends_on: ["write"], output_schema: verdict },
        ],
        loops: [{ tasks: ["write", "review"], until: "results.review.structured.aproved", max_rounds: 3 }],
      }),
      { baseDir: tmpdir(), env: {}, format: "json" },
    );
    expect(!result.ok && result.errors).toEqual([
      expect.objectContaining({ path: "loops[0].until", message: expect.stringContaining('no field "aproved"'), hint: 'did you mean "approved"?' }),
    ]);
  });
});

describe("for_each over a result", () => {
  it("makes exactly one copy per element of the planner's list, each with its own item; the reducer reads all of them", async () => {
    const files = ["a.ts", "b.ts", "c.ts", "d.ts", "e.ts"].map((file, k) => ({ id: `f${k}`, file }));
    const config = await swarm({
      concurrency: 5,
      tasks: [
        { name: "plan", prompt: "plan", output_schema: FILES },
        { name: "fix", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "Fix {{item.file}} as number {{index}}" },
        { name: "reduce", depends_on: ["fix"], prompt: "All: {{results.fix.all}}" },
        { name: "check-{{item.id}}", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "Check {{item.file}}" },
        { name: "count", depends_on: ["check-{{item.id}}", "plan"], prompt: "Checked: {{results.plan.structured.files}}" },
      ],
    });
    const { server, events, settled, result } = await run(config, {
      plan: [structured({ files })],
      fix: [{ text: "fixed: {{prompt}}" }],
      check: [{ text: "ok" }],
      reduce: [{ text: "{{prompt}}" }],
      count: [{ text: "{{prompt}}" }],
    });

    const added = events.filter((e): e is TasksAddedEvent => e.type === "tasks_added");
    expect(added.map((e) => [e.parent, e.tasks.map((t) => t.name)])).toEqual([
      ["fix", ["fix-0", "fix-1", "fix-2", "fix-3", "fix-4"]],
      ["check-{{item.id}}", ["check-f0", "check-f1", "check-f2", "check-f3", "check-f4"]],
    ]);
    expect(added[0]!.tasks.map((t) => t.item)).toEqual(files);
    // Exactly five fixer conversations, each about its own file and index.
    const fixes = requestsOf(server.requests, "fix");
    expect(fixes).toHaveLength(5);
    const asked = fixes.map((r) => conversationText(r).match(/Fix \S+ as number \d/g));
    expect(asked.map((found) => found?.length)).toEqual([1, 1, 1, 1, 1]);
    expect(asked.map((found) => found![0]).sort()).toEqual(files.map(({ file }, k) => `Fix ${file} as number ${k}`));
    for (const [k, { file }] of files.entries()) expect(result(`fix-${k}`).text).toBe(`fixed: Fix ${file} as number ${k}`);
    // The task as written stands for all its copies: a list of their texts, and each copy in full.
    expect(result("fix")).toMatchObject({
      status: "succeeded",
      text: JSON.stringify(files.map(({ file }, k) => `fixed: Fix ${file} as number ${k}`)),
    });
    const all = JSON.parse(result("reduce").text.slice("All: ".length)) as { name: string; item: unknown; index: number; text: string }[];
    expect(all.map(({ name, item, index, text }) => ({ name, item, index, text }))).toEqual(
      files.map((item, k) => ({ name: `fix-${k}`, item, index: k, text: `fixed: Fix ${item.file} as number ${k}` })),
    );
    expect(requestsOf(server.requests, "reduce")).toHaveLength(1);
    // A dependent of the copies named by item starts only once all five have ended.
    const at = (name: string) => events.findIndex((e) => e.type === "task_settled" && e.task.name === name);
    expect(at("count")).toBeGreaterThan(Math.max(...files.map(({ id }) => at(`check-${id}`))));
    expect(settled.get("count")!.result.status).toBe("succeeded");
  });

  it("an empty list makes no copies and its dependents run; a value that is not a list, or too long a one, fails the task", async () => {
    const config = await swarm({
      tasks: [
        { name: "plan", prompt: "plan", output_schema: FILES },
        { name: "none", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "{{item}}" },
        { name: "after-none", depends_on: ["none"], prompt: "got {{results.none.all}} and {{results.none}}" },
        { name: "bad", depends_on: ["plan"], for_each: "{{results.plan.structured.name}}", prompt: "{{item}}" },
        { name: "after-bad", depends_on: ["bad"], prompt: "never" },
        { name: "many", depends_on: ["plan"], for_each: "{{ results.plan.structured.files }}", max_items: 1, prompt: "{{item}}" },
      ],
    });
    const { server, events, result } = await run(config, {
      plan: [structured({ files: [], name: "not a list" })],
      "after-none": [{ text: "{{prompt}}" }],
      "after-bad": [{ text: "never" }],
    });
    expect(events.filter((e) => e.type === "tasks_added").map((e) => (e as TasksAddedEvent).tasks)).toEqual([[], []]);
    expect(result("none")).toMatchObject({ status: "succeeded", text: "[]" });
    expect(result("after-none")).toMatchObject({ status: "succeeded", text: "got [] and []" });
    expect(result("bad")).toMatchObject({
      status: "failed",
      error: { code: "MAP_NOT_A_LIST", message: 'for_each: {{results.plan.structured.name}} held a string ("not a list"), not a list' },
    });
    expect(result("after-bad")).toMatchObject({ status: "skipped", error: { code: "DEPENDENCY_FAILED" } });
    expect(requestsOf(server.requests, "after-bad")).toEqual([]);
    // An empty list is within any max_items; "many" has no copies either.
    expect(result("many").status).toBe("succeeded");
  });

  it("a list longer than max_items fails the task, saying how long it was", async () => {
    const config = await swarm({
      tasks: [
        { name: "plan", prompt: "plan", output_schema: FILES },
        { name: "many", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", max_items: 2, prompt: "{{item}}" },
      ],
    });
    const { server, result } = await run(config, { plan: [structured({ files: ["a", "b", "c"] })] });
    expect(result("many")).toMatchObject({
      status: "failed",
      error: { code: "MAP_TOO_MANY_ITEMS", message: "for_each: {{results.plan.structured.files}} held 3 items, more than max_items (2)" },
    });
    expect(server.requests.filter((r) => r.script === "many")).toEqual([]);
  });
});

describe("for_each over a result, resumed", () => {
  it("makes the same copies from an unchanged list and runs only the copy that did not finish", async () => {
    const files = ["a.ts", "b.ts", "c.ts"];
    const tasks = [
      { name: "plan", prompt: "plan", output_schema: FILES },
      { name: "fix", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "Fix {{item}}" },
      { name: "merge", depends_on: ["fix"], prompt: "Merge {{results.fix}}" },
    ];
    const fixed = [{ text: "fixed: {{prompt}}" }];
    const rehearsal = { plan: [structured({ files })], fix: fixed, merge: [{ text: "{{prompt}}" }] };
    const outDir = join(await tempHome("cadre-map-resume-"), "run");
    // The first attempt: the model keeps failing fix-1, so it fails and merge is skipped.
    const broken = [{ text: "never", fail: { status: 400, times: 3, message: "scripted outage" } }];
    const first = await runSwarmFile(await swarm({ tasks, rehearsal: { ...rehearsal, "fix-1": broken } }), { outDir, rehearse: true });
    const statuses = (summary: typeof first.summary) => summary.tasks.map((t) => [t.name, t.status, t.carried_over ?? false]);
    expect(statuses(first.summary)).toEqual([
      ["plan", "succeeded", false],
      ["fix", "failed", false],
      ["fix-0", "succeeded", false],
      ["fix-1", "failed", false],
      ["fix-2", "succeeded", false],
      ["merge", "skipped", false],
    ]);

    const config = await swarm({ tasks, rehearsal });
    const resume = await planResume(config, { dir: outDir, runsDir: outDir, fresh: false });
    expect(resume.removed).toEqual([]);
    const second = await runSwarmFile(config, { outDir, rehearse: true, resume });
    expect(second.exitCode).toBe(0);
    expect(statuses(second.summary)).toEqual([
      ["plan", "succeeded", true],
      ["fix", "succeeded", false],
      ["fix-0", "succeeded", true],
      ["fix-1", "succeeded", false],
      ["fix-2", "succeeded", true],
      ["merge", "succeeded", false],
    ]);
    expect(second.summary.tasks.filter((t) => t.copy_of === "fix").map((t) => t.item)).toEqual(files);
    expect(second.summary.attempt_totals?.tasks_run).toBe(2);
    // fix-1 went on in the session its failed attempt left; the reducer read all three copies.
    const copies = second.summary.tasks.filter((t) => t.copy_of === "fix");
    expect(copies.map((t) => t.text.startsWith(`fixed: Fix ${t.item}`))).toEqual([true, true, true]);
    expect(second.summary.tasks.at(-1)?.text).toBe(`Merge ${JSON.stringify(copies.map((t) => t.text))}`);
  });
});

describe("for_each over a result whose list changed, resumed", () => {
  it("keeps the copies whose item only moved in the list, and runs the copy of the new item", async () => {
    const tasks = (plan: string) => [
      { name: "plan", prompt: plan, output_schema: FILES },
      { name: "fix", depends_on: ["plan"], for_each: "{{results.plan.structured.files}}", prompt: "Fix {{item}}" },
      { name: "merge", depends_on: ["fix"], prompt: "Merge {{results.fix}}" },
    ];
    const fixed = [{ text: "fixed: {{prompt}}" }];
    const outDir = join(await tempHome("cadre-map-moved-"), "run");
    // The first attempt: every copy is fixed, the merge fails.
    const broken = [{ text: "never", fail: { status: 400, times: 3, message: "scripted outage" } }];
    const first = await runSwarmFile(
      await swarm({ tasks: tasks("plan"), rehearsal: { plan: [structured({ files: ["a.ts", "b.ts", "c.ts"] })], fix: fixed, merge: broken } }),
      { outDir, rehearse: true },
    );
    expect(first.summary.tasks.find((t) => t.name === "merge")?.status).toBe("failed");

    // The plan is asked again (its prompt changed) and puts a new file first: every other copy's item moved.
    const rehearsal = { plan: [structured({ files: ["new.ts", "a.ts", "b.ts", "c.ts"] })], fix: fixed, merge: [{ text: "{{prompt}}" }] };
    const config = await swarm({ tasks: tasks("plan, new.ts first"), rehearsal });
    const second = await runSwarmFile(config, {
      outDir,
      rehearse: true,
      resume: await planResume(config, { dir: outDir, runsDir: outDir, fresh: false }),
    });
    expect(second.exitCode).toBe(0);
    const copies = second.summary.tasks.filter((t) => t.copy_of === "fix");
    expect(copies.map((t) => [t.name, t.item, t.index, t.carried_over ?? false, t.text])).toEqual([
      ["fix-0", "new.ts", 0, false, "fixed: Fix new.ts"],
      ["fix-1", "a.ts", 1, true, "fixed: Fix a.ts"],
      ["fix-2", "b.ts", 2, true, "fixed: Fix b.ts"],
      ["fix-3", "c.ts", 3, true, "fixed: Fix c.ts"],
    ]);
    // Asked: the plan, the new file's copy and the merge; the moved copies gave the results of those that did their work.
    expect(second.summary.attempt_totals?.tasks_run).toBe(3);
    expect(second.summary.tasks.find((t) => t.name === "merge")?.text).toBe(`Merge ${JSON.stringify(copies.map((t) => t.text))}`);
  });
});

const VERDICT = { type: "object", properties: { approved: { type: "boolean" }, notes: { type: "string" } }, required: ["approved", "notes"] };

describe("loops", () => {
  it("runs exactly the rounds until the reviewer approves, the writer in one session; a loop that never holds ends at max_rounds", async () => {
    const config = await swarm({
      tasks: [
        { name: "write", prompt: "Write a haiku." },
        { name: "review", depends_on: ["write"], output_schema: VERDICT, prompt: "Review: {{results.write}}" },
        { name: "ship", depends_on: ["review", "write"], prompt: "Ship {{results.write}}" },
        { name: "draft", prompt: "Draft." },
        { name: "check", depends_on: ["draft"], output_schema: VERDICT, prompt: "Check {{results.draft}}" },
        { name: "after-check", depends_on: ["check"], prompt: "never" },
      ],
      loops: [
        {
          name: "haiku",
          tasks: ["write", "review"],
          until: "results.review.structured.approved",
          max_rounds: 5,
          // The reviewer judges each draft afresh, so each of its rounds plays a script of its own.
          fresh: ["review"],
          next_prompts: { write: "Critique: {{previous.review.structured.notes}}" },
        },
        { tasks: ["draft", "check"], until: "results.check.structured.approved", max_rounds: 2, fresh: true },
      ],
    });
    const { server, events, result } = await run(config, {
      write: [{ text: "draft one" }, { text: "draft two" }, { text: "draft three" }],
      "review#1": [structured({ approved: false, notes: "too long" })],
      "review#2": [structured({ approved: false, notes: "too dull" })],
      "review#3": [structured({ approved: true, notes: "fine" })],
      ship: [{ text: "{{prompt}}" }],
      draft: [{ text: "a draft" }],
      check: [structured({ approved: false, notes: "no" })],
    });

    // Three rounds: three model requests for each task of the loop, no more.
    const writes = requestsOf(server.requests, "write");
    expect(writes).toHaveLength(3);
    expect([1, 2, 3, 4].map((round) => requestsOf(server.requests, `review#${round}`).length)).toEqual([1, 1, 1, 0]);
    // The writer's third prompt sits in the session of its first, and carries the second round's critique.
    expect(writes[2]!.sessionId).toBeDefined();
    expect(writes[2]!.sessionId).toBe(writes[0]!.sessionId);
    expect(conversationText(writes[2])).toContain("draft one");
    expect(conversationText(writes[2])).toContain("Critique: too dull");
    expect(conversationText(writes[0])).toContain("Write a haiku.");
    expect(conversationText(writes[0])).not.toContain("Critique");
    expect(result("write#3").text).toBe("draft three");
    expect(result("write")).toMatchObject({ status: "succeeded", text: "draft three", costUsd: 0 });
    expect(result("ship").text).toBe("Ship draft three");
    const ended = events.filter((e): e is LoopEndedEvent => e.type === "loop_ended");
    expect(ended.map(({ loop, status, rounds }) => ({ loop, status, rounds }))).toEqual(
      expect.arrayContaining([
        { loop: "haiku", status: "succeeded", rounds: 3 },
        { loop: "draft+check", status: "max_rounds", rounds: 2 },
      ]),
    );
    // fresh: each round in a new session (the script starts over); the loop's tasks fail, their dependents skip.
    const checks = requestsOf(server.requests, "check");
    expect(checks).toHaveLength(2);
    expect(checks[1]!.sessionId).not.toBe(checks[0]!.sessionId);
    expect(result("check")).toMatchObject({ status: "failed", error: { code: "LOOP_MAX_ROUNDS" } });
    expect(result("check").error?.message).toBe('the loop "draft+check" ran 2 rounds (max_rounds) and results.check.structured.approved never held');
    expect(result("after-check").status).toBe("skipped");
    expect(events.some((e) => e.type === "task_settled" && e.task.name === "write#4")).toBe(false);
  });
});

describe("a loop, resumed", () => {
  it("keeps the rounds that ended and asks the model only for the round that did not, and what waited on the loop", async () => {
    const tasks = [
      { name: "write", prompt: "Write a haiku." },
      { name: "review", depends_on: ["write"], output_schema: VERDICT, prompt: "Review: {{results.write}}" },
      { name: "ship", depends_on: ["review", "write"], prompt: "Ship {{results.write}}" },
    ];
    const loops = [
      {
        name: "haiku",
        tasks: ["write", "review"],
        until: "results.review.structured.approved",
        max_rounds: 3,
        fresh: ["review"],
        next_prompts: { write: "Critique: {{previous.review.structured.notes}}" },
      },
    ];
    const rehearsal = {
      write: [{ text: "draft one" }, { text: "draft two" }],
      "review#1": [structured({ approved: false, notes: "too long" })],
      "review#2": [structured({ approved: true, notes: "fine" })],
      ship: [{ text: "{{prompt}}" }],
    };
    const outDir = join(await tempHome("cadre-loop-resume-"), "run");
    // The first attempt: the model keeps failing the second review, so the loop fails and ship is skipped.
    const broken = [{ text: "never", fail: { status: 400, times: 3, message: "scripted outage" } }];
    const first = await runSwarmFile(await swarm({ tasks, loops, rehearsal: { ...rehearsal, "review#2": broken } }), { outDir, rehearse: true });
    const rows = (summary: typeof first.summary) => Object.fromEntries(summary.tasks.map((t) => [t.name, [t.status, t.carried_over ?? false]]));
    expect(rows(first.summary)).toMatchObject({ "write#1": ["succeeded", false], "review#2": ["failed", false], ship: ["skipped", false] });

    const config = await swarm({ tasks, loops, rehearsal });
    const second = await runSwarmFile(config, {
      outDir,
      rehearse: true,
      resume: await planResume(config, { dir: outDir, runsDir: outDir, fresh: false }),
    });
    expect(second.exitCode).toBe(0);
    expect(rows(second.summary)).toEqual({
      write: ["succeeded", false],
      "write#1": ["succeeded", true],
      "write#2": ["succeeded", true],
      review: ["succeeded", false],
      "review#1": ["succeeded", true],
      "review#2": ["succeeded", false],
      ship: ["succeeded", false],
    });
    // Two tasks asked the model: the review that had failed, and ship, which waited on the loop.
    expect(second.summary.attempt_totals?.tasks_run).toBe(2);
    expect(second.summary.loops).toMatchObject([{ name: "haiku", status: "succeeded", rounds: 2 }]);
    expect(second.summary.tasks.find((t) => t.name === "write#1")?.carried_from).toMatchObject({ run_id: first.summary.run_id, attempt: 1 });
    expect(second.summary.tasks.at(-1)?.text).toBe("Ship draft two");
  });
});
