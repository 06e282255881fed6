import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layerWorkerOptions, tasksPerProcess } from "../../src/orchestrator/compose.ts";
import { ConfigError, fillResults, loadSwarmConfig, loadSwarmConfigOrThrow, orchestratorOptionsFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { workerOf } from "../support/swarm.ts";

const dir = fileURLToPath(new URL("../fixtures/config/", import.meta.url)).replace(/\/$/, "");
const fixture = join(dir, "swarm.yaml");

describe("loadSwarmConfig on a complete swarm", () => {
  it("expands for_each, resolves dependencies and merges settings", async () => {
    const result = await loadSwarmConfig(fixture, { env: { CADRE_TEST_CONCURRENCY: "6" } });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const { config } = result;
    expect(config).toMatchObject({ name: "review-swarm", file: fixture, base_dir: dir, concurrency: 6, budget_usd: 1.5 });
    expect(config.tasks.map((task) => [task.name, task.depends_on])).toEqual([
      ["review-a.ts", []],
      ["review-b.ts", []],
      ["fix-a.ts", ["review-a.ts"]],
      ["fix-b.ts", ["review-b.ts"]],
      ["summary", ["fix-a.ts", "fix-b.ts"]],
    ]);
    const [reviewA, , fixA, , summary] = config.tasks;
    expect(reviewA).toMatchObject({ template: "review-{{item}}", index: 0, item: "a.ts", prompt: "Review a.ts", priority: 0 });
    // No retries written: the orchestrator's default applies, the same as in the library.
    expect(reviewA).not.toHaveProperty("retries");
    // {{item}} is filled in now; {{results.…}} is left for the runner.
    expect(fixA).toMatchObject({
      item: { file: "a.ts", line: 3 },
      prompt: "Fix a.ts around line 3: {{results.review-a.ts}}",
      retries: 2,
      priority: 1,
    });
    // Model: task, then agent, then defaults; the reviewer's file says "inherit".
    const [reviewAWorker, fixAWorker, summaryWorker] = [reviewA!, fixA!, summary!].map((task) => workerOf(config, task));
    expect([reviewAWorker?.model, fixAWorker?.model, summaryWorker?.model]).toEqual(["sonnet", "opus", "haiku"]);
    expect(
      config.tasks.every(
        (task) =>
          workerOf(config, task).cwd === join(dir, "work") && task.timeout_s === 300 && workerOf(config, task).permissionMode === "acceptEdits",
      ),
    ).toBe(true);
  });

  it("resolves agents from files and inline definitions", async () => {
    const result = await loadSwarmConfig(fixture, { env: {} });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.config.concurrency).toBe(2);
    expect(result.config.agents).toEqual({
      reviewer: {
        name: "reviewer",
        description: "Reviews code for bugs",
        prompt: "You are a code reviewer. Report bugs with file:line references.",
        tools: ["Read", "Grep", "Glob"],
        file: join(dir, "agents", "reviewer.md"),
      },
      fixer: { name: "fixer", description: "Fixes what the reviewer found", prompt: "You fix code.", tools: ["Read", "Edit"], model: "opus" },
    });
  });

  it("keeps hooks with defaults applied and gives rehearsal scripts per task", async () => {
    const result = await loadSwarmConfig(fixture, { env: {} });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const { hooks, rehearsal, connections } = result.config;
    expect(hooks.PreToolUse?.map((entry) => entry.on_error)).toEqual(["deny", "deny"]);
    expect(hooks.Stop).toEqual([{ command: "./notify.sh", on_error: "allow" }]);
    expect(connections).toEqual({ fixer: ["reviewer"] });
    expect(Object.keys(rehearsal)).toEqual(["review-a.ts", "review-b.ts", "summary"]);
    expect(rehearsal.summary?.[0]).toMatchObject({ tool_use: { name: "Read", input: { file_path: "a.ts" } } });
  });

  it("gives the workers a task spawns the scripts named '<task>/child', a for_each task's to each copy", async () => {
    const config = (lines: string[]) => parseSwarmConfig(lines.join("\n"), { baseDir: dir, env: {} });
    const result = await config([
      "tasks:",
      "  - { name: lead, prompt: go }",
      "  - { name: 'review-{{item}}', for_each: [a, b], prompt: 'review {{item}}' }",
      "rehearsal:",
      "  lead: [{ text: lead }]",
      "  lead/child: [{ text: child }]",
      "  lead/child/child: [{ text: grandchild }]",
      "  'review-{{item}}/child': [{ text: a reviewer's child }]",
    ]);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(Object.keys(result.config.rehearsal).sort()).toEqual(["lead", "lead/child", "lead/child/child", "review-a/child", "review-b/child"]);
    const unknown = await config(["tasks:", "  - { name: lead, prompt: go }", "rehearsal:", "  lede/child: [{ text: child }]"]);
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.errors).toEqual([expect.objectContaining({ path: 'rehearsal["lede/child"]', message: 'unknown task "lede"' })]);
  });

  it("reads JSON configs and names a swarm after its file by default", async () => {
    const result = await loadSwarmConfig(join(dir, "swarm.json"), { env: {} });
    expect(result.ok && [result.config.name, result.config.defaults.cwd, workerOf(result.config, result.config.tasks[0]!).cwd]).toEqual([
      "swarm",
      dir,
      dir,
    ]);
  });

  it("reports a missing file as an issue, or throws ConfigError when asked to", async () => {
    const missing = join(dir, "nope.yaml");
    expect(await loadSwarmConfig(missing)).toEqual({ ok: false, errors: [{ path: "", message: `cannot read ${missing}: no such file` }] });
    const error = await loadSwarmConfigOrThrow(missing).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code: "CONFIG_INVALID", issues: [{ path: "" }] });
    expect((error as Error).message).toBe(`${missing} has 1 problem: cannot read ${missing}: no such file`);
  });
});

describe("agent settings", () => {
  it("stay with the agent, as written, and reach every worker that runs as it once converted", async () => {
    const text = [
      "defaults: { max_turns: 20, permission_mode: default }",
      "agents:",
      "  a: { description: d, prompt: p, max_turns: 3, permission_mode: plan }",
      "tasks:",
      "  - { name: t, agent: a, prompt: go }",
    ].join("\n");
    const result = await parseSwarmConfig(text, { baseDir: dir, env: {} });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const { config } = result;
    expect(config.agents.a).toMatchObject({ max_turns: 3, permission_mode: "plan" });
    expect(config.tasks[0]).not.toHaveProperty("max_turns");
    const options = orchestratorOptionsFor(config);
    expect(options.agents?.a).toMatchObject({ maxTurns: 3, permissionMode: "plan" });
    // A task's worker, and a peer or supervisor session of the agent (no task layer).
    expect(workerOf(config, config.tasks[0]!)).toMatchObject({ maxTurns: 3, permissionMode: "plan" });
    expect(layerWorkerOptions({ defaults: options.defaults, agent: options.agents?.a })).toMatchObject({ maxTurns: 3, permissionMode: "plan" });
  });
});

describe("cache_stagger", () => {
  it("is on unless the swarm says false; the orchestrator gets it as cacheStagger", async () => {
    const parse = async (head: string) => {
      const result = await parseSwarmConfig(`${head}tasks: [{ name: t, prompt: go }]`, { baseDir: dir, env: {} });
      if (!result.ok) throw new Error(JSON.stringify(result.errors));
      return orchestratorOptionsFor(result.config);
    };
    expect((await parse("")).cacheStagger).toBeUndefined();
    expect((await parse("cache_stagger: false\n")).cacheStagger).toBe(false);
    const wrong = await parseSwarmConfig("cache_stagger: sometimes\ntasks: [{ name: t, prompt: go }]", { baseDir: dir, env: {} });
    expect(wrong.ok ? [] : wrong.errors.map((e) => e.path)).toEqual(["cache_stagger"]);
  });
});

describe("reuse", () => {
  it("goes from defaults and inline agents to the orchestrator, the agent's winning, and is not a worker setting", async () => {
    const text = [
      "defaults: { reuse: true }",
      "agents:",
      "  capped: { description: d, prompt: p, reuse: 5 }",
      "  single: { description: d, prompt: p, reuse: false }",
      "  plain: { description: d, prompt: p }",
      "tasks:",
      "  - { name: t, agent: capped, prompt: go }",
    ].join("\n");
    const result = await parseSwarmConfig(text, { baseDir: dir, env: {} });
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const options = orchestratorOptionsFor(result.config);
    expect(options.reuse).toBe(true);
    expect(options.defaults).not.toHaveProperty("reuse");
    const agents = options.agents!;
    expect([
      tasksPerProcess(agents.capped, options.reuse),
      tasksPerProcess(agents.single, options.reuse),
      tasksPerProcess(agents.plain, options.reuse),
    ]).toEqual([5, 1, 50]);
    expect(tasksPerProcess(undefined, undefined)).toBe(1);
    expect(workerOf(result.config, result.config.tasks[0]!)).not.toHaveProperty("reuse");
  });

  it("refuses what is not a boolean or a positive whole number, with its path", async () => {
    const text = [
      "defaults: { reuse: 0 }",
      "agents:",
      "  a: { description: d, prompt: p, reuse: many }",
      "tasks:",
      "  - { name: t, prompt: go }",
    ].join("\n");
    const result = await parseSwarmConfig(text, { baseDir: dir, env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((issue) => issue.path).sort()).toEqual(["agents.a.reuse", "defaults.reuse"]);
  });
});

describe("fillResults", () => {
  it("replaces known results and leaves the rest as written", () => {
    const names = new Set(["review-a.ts", "review-a", "other"]);
    const lookup = (name: string) => (name === "review-a.ts" ? { text: "LGTM" } : undefined);
    expect(fillResults("a: {{results.review-a.ts}} b: {{ results.other }}", names, lookup)).toBe("a: LGTM b: {{ results.other }}");
  });
});
