// The same workflow scripts through the pinned CLI's own runtime (its Workflow tool, `claude -p`) and through
// `cadre run`, against one scripted model: the same `result` (and `logs`), and the same refusals before any
// agent asks the model. Agents reply with their task ({{task}}: the prompt without the harness's frame, which
// Claude Code and cadre word differently), so a result shows which agent answered what.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalScriptInput } from "../../src/rehearsal/index.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { workflowArgs } from "../../src/workflow/index.ts";
import { CLAUDE_BIN } from "../support/claude.ts";
import { bin } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import {
  CADRE_AGENTS_SCRIPT,
  CLAUDE_MAIN_SCRIPT,
  claudeWorkflowArgs,
  launchWorkflow,
  type WorkflowOutcome as Outcome,
  workflowModel,
  workflowOutcome,
} from "../support/workflow-cli.ts";
import { INTL_CASES } from "./intl-cases.ts";

/** Runs the script through `claude -p` and its Workflow tool; the run's output file, or the tool's refusal. */
async function throughClaude(server: RehearsalServer, dir: string, script: string, args?: unknown): Promise<Outcome | { refused: string }> {
  server.setScript(CLAUDE_MAIN_SCRIPT, launchWorkflow(script, args));
  const home = join(dir, "claude-home");
  await mkdir(home, { recursive: true });
  const run = await execa(CLAUDE_BIN, claudeWorkflowArgs(), {
    cwd: dir,
    env: { ...offlineClaudeEnv({ baseUrl: server.url, home }), TMPDIR: join(home, "tmp") },
    extendEnv: false,
    input: "",
    reject: false,
    timeout: 120_000,
  });
  const outcome = await workflowOutcome(run.stdout);
  if (outcome === undefined) throw new Error(`claude ran no workflow (exit ${run.exitCode}): ${run.stderr.slice(-2000)}`);
  return outcome;
}

/** Runs the script with `cadre run`, its workers against the same scripted model; the record, or the refusal. */
async function throughCadre(server: RehearsalServer, dir: string, script: string, args?: unknown): Promise<Outcome | { refused: string }> {
  const file = join(dir, "script.js");
  await writeFile(file, script);
  const home = join(dir, "cadre-home");
  await mkdir(home, { recursive: true });
  const out = join(dir, `run-${Math.random().toString(36).slice(2)}`);
  const run = await execa("node", [bin, "run", file, "--out", out, ...(args === undefined ? [] : ["--args", JSON.stringify(args)])], {
    cwd: dir,
    env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(CADRE_AGENTS_SCRIPT), home }),
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  if (run.exitCode === 2) return { refused: run.stderr.trim() };
  expect(run.exitCode, run.stderr).toBe(0);
  return JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as Outcome;
}

/** Both ways; the agent requests each made. */
async function both(agent: RehearsalScriptInput, dir: string, script: string, args?: unknown) {
  const server = await createRehearsal(workflowModel(agent));
  const agentRequests = () => server.requests.filter((request) => request.agentId !== undefined || request.script === CADRE_AGENTS_SCRIPT).length;
  const claude = await throughClaude(server, dir, script, args);
  const claudeAgents = agentRequests();
  const cadre = await throughCadre(server, dir, script, args);
  return { claude, cadre, claudeAgents, cadreAgents: agentRequests() - claudeAgents };
}

const ECHO: RehearsalScriptInput = [{ text: "did: {{task}}" }];

/** The labels the run gave its agents, in the order they started: the CLI's progress entries, cadre's record rows. */
function labels(outcome: Outcome | { refused: string }): string[] {
  const { workflowProgress, tasks } = outcome as { workflowProgress?: { type: string; label: string }[]; tasks?: { label: string }[] };
  return (workflowProgress?.filter((entry) => entry.type === "workflow_agent") ?? tasks ?? []).map((entry) => entry.label);
}

/** A script that evaluates each expression and returns what each gave (or what it threw). */
function evaluating(expressions: readonly string[]): string {
  const lines = expressions.map((expression) => `t(${JSON.stringify(expression)}, () => ${expression})`);
  return `export const meta = { name: "conf-eval", description: "evaluates" }
const r = {}
const t = (k, f) => { try { r[k] = f() } catch (e) { r[k] = "threw: " + e.message } }
${lines.join("\n")}
return r
`;
}

describe("conformance with Claude Code's own workflow runtime", () => {
  it("text agents, phases, log, args and budget without a target", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-text", description: "text agents", phases: [{ title: "One" }, { title: "Two" }] }
phase("One")
log("begin " + args.who)
const a = await agent("alpha for " + args.who, { label: "a" })
phase("Two")
const b = await agent("beta", { label: "b", phase: "Two" })
log("end")
return { a, b, args, budget: [budget.total, budget.remaining()] }
`;
    const { claude, cadre } = await both(ECHO, tmp, script, { who: "ana", list: [1, 2] });
    expect(cadre).toMatchObject({ result: (claude as Outcome).result, logs: (claude as Outcome).logs });
    expect((claude as Outcome).result).toEqual({ a: "did: alpha for ana", b: "did: beta", args: { who: "ana", list: [1, 2] }, budget: [null, null] });
  });

  it("parallel with a throwing thunk and pipeline with a throwing stage", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-fan", description: "fan-out" }
const p = await parallel([() => agent("one"), () => { throw new Error("boom") }, () => agent("two")])
const q = await pipeline(["x", "y", "z"], (item, _, i) => { if (item === "y") throw new Error("no y"); return agent("first " + item) }, (prev, item, i) => agent("second " + prev.length + " " + item + i))
return { p, q }
`;
    const { claude, cadre } = await both(ECHO, tmp, script);
    expect(cadre).toMatchObject({ result: (claude as Outcome).result, logs: (claude as Outcome).logs });
    expect((claude as Outcome).result).toEqual({ p: ["did: one", null, "did: two"], q: ["did: second 12 x0", null, "did: second 12 z2"] });
  });

  it("schema results", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-schema", description: "structured" }
const schema = { type: "object", properties: { echo: { type: "string" }, n: { type: "number" } }, required: ["echo", "n"] }
const out = await parallel(["red", "blue"].map((c) => () => agent("colour " + c, { schema })))
return out
`;
    const agent: RehearsalScriptInput = [{ tool_use: { name: "StructuredOutput", input: { echo: "{{task}}", n: 3 } } }, { text: "ok" }];
    const { claude, cadre } = await both(agent, tmp, script);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toEqual([
      { echo: "colour red", n: 3 },
      { echo: "colour blue", n: 3 },
    ]);
  });

  it("a nested workflow()", { timeout: 300_000 }, async ({ tmp }) => {
    await mkdir(join(tmp, ".claude", "workflows"), { recursive: true });
    await writeFile(
      join(tmp, ".claude", "workflows", "helper.js"),
      'export const meta = { name: "helper", description: "a saved helper" }\nlog("in helper")\nreturn { got: args, said: await agent("helper asks " + args.q) }\n',
    );
    await writeFile(
      join(tmp, ".claude", "workflows", "breaks.js"),
      'export const meta = { name: "breaks", description: "a saved helper that throws" }\nthrow new Error("child broke")\n',
    );
    const script = `export const meta = { name: "conf-nested", description: "nests" }
const inner = await workflow("helper", { q: "why" })
let missing; try { await workflow("no-such-workflow") } catch (e) { missing = "threw" }
let broke; try { await workflow("breaks") } catch (e) { broke = "threw" }
return { inner, missing, broke }
`;
    const { claude, cadre } = await both(ECHO, tmp, script);
    // The same log lines, a failed child's with its error (the CLI adds its engine's stack, which cadre's engine cannot have).
    const firstLines = (outcome: Outcome | { refused: string }) => (outcome as Outcome).logs?.map((line) => line.split("\n")[0]);
    expect(firstLines(cadre)).toEqual(firstLines(claude));
    expect(firstLines(claude)).toEqual([
      "▸ running dynamic workflow helper",
      "[helper] in helper",
      "▸ helper done",
      "▸ running dynamic workflow breaks",
      "▸ breaks failed: Error: child broke",
    ]);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toEqual({ inner: { got: { q: "why" }, said: "did: helper asks why" }, missing: "threw", broke: "threw" });
  });

  it("a script that reaches for the host process finds nothing", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-host", description: "reaches out" }
const seen = [typeof process, typeof require, typeof Deno, typeof Bun, typeof fetch, typeof globalThis.process, typeof module]
let viaFunction; try { viaFunction = Function("return typeof process")() } catch (e) { viaFunction = "undefined" }
let viaEval; try { viaEval = eval("typeof process") } catch (e) { viaEval = "undefined" }
return { seen, viaFunction, viaEval }
`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toEqual({ seen: Array(7).fill("undefined"), viaFunction: "undefined", viaEval: "undefined" });
    expect([claudeAgents, cadreAgents]).toEqual([0, 0]);
  });

  it("a pipeline stage that gives null skips the item's later stages", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-null", description: "null stage" }
return await pipeline(["x", "y", null], (item) => (item === "y" ? null : agent("first " + item)), (prev, item) => agent("second " + prev))
`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toEqual(["did: second did: first x", null, null]);
    expect([claudeAgents, cadreAgents]).toEqual([2, 2]);
  });

  it.for<[string, RehearsalScriptInput]>([
    ["ends without calling StructuredOutput", [{ text: "no tool" }, { text: "still no tool" }, { text: "none" }, { text: "none again" }]],
    [
      "never gives a valid output",
      [...Array.from({ length: 6 }, (_, n) => ({ tool_use: { name: "StructuredOutput", input: { wrong: n } } })), { text: "gave up" }],
    ],
  ])("a schema agent that %s makes agent() throw with the reason", { timeout: 300_000 }, async ([_name, agent], { tmp }) => {
    const script = `export const meta = { name: "conf-schema-fails", description: "no valid output" }
try { return await agent("answer", { schema: { type: "object", properties: { echo: { type: "string" } }, required: ["echo"] } }) } catch (e) { return "threw: " + e.message }
`;
    const { claude, cadre } = await both(agent, tmp, script);
    for (const outcome of [claude, cadre]) expect((outcome as Outcome).result).toMatch(/^threw: agent\(\{schema\}\): .*StructuredOutput/);
  });

  it("takes the loose arguments the CLI takes, and labels an unlabeled agent by its prompt", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-loose", description: "loose arguments" }
return {
  numberLabel: await agent("n label", { label: 5 }),
  nullSchema: await agent("schema null", { schema: null }),
  numberPrompt: await agent(42),
  emptyPrompt: typeof (await agent("", { label: "empty" })),
  ultra: await agent("ultra effort", { effort: "ultra" }),
  isolation: await agent("odd isolation", { isolation: "sideways" }),
  unknownKey: await agent("unknown key", { whatever: 1 }),
  notOptions: await agent("options as text", "text"),
  long: await agent("  a long prompt\\n   that goes on past sixty characters, so that its label is cut short"),
}
`;
    const { claude, cadre } = await both(ECHO, tmp, script);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toMatchObject({ numberLabel: "did: n label", numberPrompt: "did: 42", emptyPrompt: "string" });
    expect(labels(cadre)).toEqual(labels(claude));
    expect(labels(claude)).toEqual([
      "5",
      "schema null",
      "42",
      "empty",
      "ultra effort",
      "odd isolation",
      "unknown key",
      "options as text",
      "a long prompt that goes on past sixty characters, so th",
    ]);

    const bare = `export const meta = { name: "conf-bare", description: "bare object schema" }\nreturn await agent("bare", { schema: { type: "object" } })\n`;
    const structured: RehearsalScriptInput = [{ tool_use: { name: "StructuredOutput", input: { any: "{{task}}" } } }, { text: "ok" }];
    const objects = await both(structured, tmp, bare);
    expect((objects.cadre as Outcome).result).toEqual((objects.claude as Outcome).result);
    expect((objects.claude as Outcome).result).toEqual({ any: "bare" });
  });

  it("has Intl and the locale methods, with the CLI's results for en-US", { timeout: 300_000 }, async ({ tmp }) => {
    const { claude, cadre } = await both(ECHO, tmp, evaluating(INTL_CASES));
    const [expected, got] = [(claude as Outcome).result, (cadre as Outcome).result] as Record<string, unknown>[];
    expect(Object.keys(expected!)).toHaveLength(INTL_CASES.length);
    // One by one, so that a drift names the expression.
    for (const expression of INTL_CASES) expect({ expression, value: got![expression] }).toEqual({ expression, value: expected![expression] });
  });

  it("parallel() given promises throws as the CLI's does", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-promises", description: "promises to parallel" }
try { await parallel([agent("one"), agent("two")]); return "ran" } catch (e) { return e.name + ": " + e.message }
`;
    const { claude, cadre } = await both(ECHO, tmp, script);
    expect((cadre as Outcome).result).toEqual((claude as Outcome).result);
    expect((claude as Outcome).result).toBe("TypeError: parallel() expects an array of functions, not promises. Wrap each call: () => agent(...)");
  });

  // cadre's run layer calls workflowArgs on a run's args; here the rule itself is held to the CLI's.
  it.for(['{"a":1}', " [1, 2] ", "42", "true", "null", "{not json"])(
    "string args %j reach the script as workflowArgs() says",
    { timeout: 300_000 },
    async (args, { tmp }) => {
      const server = await createRehearsal(workflowModel(ECHO));
      const script = `export const meta = { name: "conf-args", description: "string args" }\nreturn { args, type: typeof args }\n`;
      const claude = (await throughClaude(server, tmp, script, args)) as Outcome;
      expect(claude.result).toEqual({ args: workflowArgs(args), type: typeof workflowArgs(args) });
    },
  );

  it("logs each failed agent and shows logged values as the CLI does", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-logs", description: "logs" }
log({ a: 1 }); log([1, 2]); log(() => 1); log(null); log(7)
return await agent("plain   one\\n two")
`;
    const failing: RehearsalScriptInput = [{ fail: { status: 400, message: "scripted refusal" } }];
    const { claude, cadre } = await both(failing, tmp, script);
    for (const outcome of [claude, cadre]) {
      expect(outcome).toMatchObject({ result: null });
      expect((outcome as Outcome).logs).toEqual([
        "[object]",
        "[object]",
        "[function]",
        "null",
        "7",
        expect.stringMatching(/^\[plain one two\] failed: .*API Error: 400 scripted refusal$/),
      ]);
    }
  });

  it("refuses a spread in meta before any model request, both ways", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { ...{ name: "conf-spread" }, description: "spread" }\nawait agent("never")\nreturn 1\n`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    for (const outcome of [claude, cadre]) expect(outcome).toMatchObject({ refused: expect.stringMatching(/meta`? must be a pure literal/) });
    expect([claudeAgents, cadreAgents]).toEqual([0, 0]);
  });

  it.for([
    ["the clock", "const started = Date.now()", /deterministic|clock/],
    ["an import", 'import fs from "node:fs"', /import/],
    ["a syntax error", "const x = ;", /Unexpected token \(3:10\)/],
  ] as const)("refuses %s before any model request, both ways", { timeout: 300_000 }, async ([_name, line, message], { tmp }) => {
    const script = `export const meta = { name: "conf-refused", description: "refused" }\nawait agent("never")\n${line}\nreturn 1\n`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    expect(claude).toMatchObject({ refused: expect.stringMatching(message) });
    expect(cadre).toMatchObject({ refused: expect.stringMatching(message) });
    expect((cadre as { refused: string }).refused.split("\n")).toHaveLength(1);
    expect([claudeAgents, cadreAgents]).toEqual([0, 0]);
  });

  it("runs the CLI's built-in agent types; an unknown type throws in the script, both ways", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-types", description: "built-in agent types" }
const out = {}
for (const type of ["general-purpose", "Explore", "Plan"]) out[type] = await agent("task for " + type, { label: type, agentType: type })
try { await agent("never", { agentType: "no-such-type" }) } catch (e) { out.unknown = "threw" }
return out
`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    expect((claude as Outcome).result).toEqual({
      "general-purpose": "did: task for general-purpose",
      Explore: "did: task for Explore",
      Plan: "did: task for Plan",
      unknown: "threw",
    });
    expect(cadre).toMatchObject({ result: (claude as Outcome).result });
    expect([claudeAgents, cadreAgents]).toEqual([3, 3]);
  });

  it("an isolated call outside a git repository throws in the script, before any model request, both ways", { timeout: 300_000 }, async ({ tmp }) => {
    const script = `export const meta = { name: "conf-iso", description: "worktree outside git" }
try { return { value: await agent("edit a file", { isolation: "worktree" }) } } catch (e) { return { threw: true } }
`;
    const { claude, cadre, claudeAgents, cadreAgents } = await both(ECHO, tmp, script);
    expect((claude as Outcome).result).toEqual({ threw: true });
    expect(cadre).toMatchObject({ result: { threw: true } });
    expect([claudeAgents, cadreAgents]).toEqual([0, 0]);
  });
});
