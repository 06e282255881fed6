// Tasks a lead agent posts (post_task), on real claude workers against this test's own scripted model, which counts
// every request: under max_posted_tasks they run as tasks of the run, the post past it is a tool error the lead reads,
// and a run killed with SIGKILL during the posted tasks, then resumed, runs each of them exactly once.
import { existsSync } from "node:fs";
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import type { RecordedRequest, RehearsalServer } from "../../src/rehearsal/server.ts";
import type { Summary } from "../../src/run/record/schema.ts";
import { bin, readRunRecord, readSummary } from "../support/cli.ts";
import { claudeDescendants, isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

/** The posted tasks' prompts: shell commands of `sleep` seconds each. */
const fixes = (sleep: number) => [1, 2, 3, 4].map((n) => `echo FIX-${n} && sleep ${sleep}`);
const FIXES = fixes(1);
// Long enough that the kill below lands in every Bash call, even on a busy machine.
const SLOW_FIXES = fixes(12);

/** The lead posts four tasks, one Bash command each, and ends; each posted task runs its command and reports its output. */
const scripts = (prompts: string[]) => ({
  lead: [
    ...prompts.map((prompt, k) => ({ tool_use: { name: "mcp__cadre__post_task", input: { name: `fix-${k + 1}`, agent: "fixer", prompt } } })),
    { text: "posted" },
  ],
  fixer: [{ tool_use: { name: "Bash", input: { command: "{{prompt}}", description: "run it" } } }, { text: "done: {{tool_result}}" }],
});
const SCRIPTS = scripts(FIXES);

/** A config and a scripted model for it; `config` adds lines to the file (before its agents). */
async function workspace(scripts: RehearsalScriptsInput = SCRIPTS, config: { lines?: string[]; fixer?: string } = {}) {
  const server = await createRehearsal(scripts);
  const dir = await tempHome("cadre-posted-");
  const home = join(dir, "home");
  await mkdir(home);
  const file = join(dir, "swarm.yaml");
  // Each agent talks to its own script of this test's server: the lead's, and the fixers'.
  const url = (script: string) => JSON.stringify(server.baseUrlFor(script));
  await writeFile(
    file,
    [
      "name: posting",
      "concurrency: 4",
      ...(config.lines ?? ["max_posted_tasks: 3"]),
      "defaults: { allowed_tools: [Bash] }",
      `agents: { fixer: { description: fixes, prompt: You fix., ${config.fixer ?? ""} env: { ANTHROPIC_BASE_URL: ${url("fixer")} } } }`,
      `tasks: [{ name: lead, prompt: find the work, post_tasks: true, env: { ANTHROPIC_BASE_URL: ${url("lead")} } }]`,
      "",
    ].join("\n"),
  );
  const env = { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor("lead"), home }), PATH: process.env.PATH };
  return { dir, config: file, server, env };
}
type Workspace = Awaited<ReturnType<typeof workspace>>;

function run(ws: Workspace, args: string[] = []) {
  return execa("node", [bin, "run", ws.config, ...args], { cwd: ws.dir, env: ws.env, extendEnv: false, reject: false });
}

async function runDir(ws: Workspace): Promise<string | undefined> {
  const root = join(ws.dir, ".cadre", "runs");
  return existsSync(root) ? (await readdir(root)).map((name) => join(root, name))[0] : undefined;
}

async function untilRecord(ws: Workspace, check: (record: Summary) => boolean): Promise<Summary> {
  return until(
    async () => {
      const dir = await runDir(ws);
      const record = dir ? await readRunRecord(dir).catch(() => undefined) : undefined;
      return record && check(record) ? record : undefined;
    },
    60_000,
    "the run's record",
  );
}

/** The fixer's requests for one posted task (its conversation began with its prompt). */
function requestsFor(server: RehearsalServer, prompt: string): RecordedRequest[] {
  return server.requests.filter((r) => r.script === "fixer" && JSON.stringify(r.messages[0]?.content ?? "").includes(prompt));
}

/** What a script's model was told of its tool calls: the tool results of its last request (`prompt`: of the conversation that began so). */
function toolResults(server: RehearsalServer, script: string, prompt = ""): { is_error?: boolean; content: unknown }[] {
  const last = server.requests.filter((r) => r.script === script && JSON.stringify(r.messages[0]?.content ?? "").includes(prompt)).at(-1);
  type Block = { type: string; is_error?: boolean; content: unknown };
  return (last?.messages ?? []).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]).filter((block) => block.type === "tool_result") : [],
  );
}

/** `outputs`: each task's reply has its command's output (a Bash call killed midway has none). */
function expectThreePosted(summary: Summary, outputs = true): void {
  expect(summary.tasks.map((t) => [t.name, t.status, t.agent, t.posted_by ?? null])).toEqual([
    ["lead", "succeeded", null, null],
    ["fix-1", "succeeded", "fixer", "lead"],
    ["fix-2", "succeeded", "fixer", "lead"],
    ["fix-3", "succeeded", "fixer", "lead"],
  ]);
  for (const n of [1, 2, 3]) expect(summary.tasks[n]!.text).toContain(outputs ? `done: FIX-${n}` : "done:");
}

describe("tasks a lead agent posts", () => {
  it("runs three under max_posted_tasks: 3, each with its own reply and a row naming the lead; the fourth is a tool error the lead sees", async () => {
    const ws = await workspace();
    const done = await run(ws);
    expect(done.exitCode, done.stderr + done.stdout).toBe(0);
    expectThreePosted(await readSummary((await runDir(ws))!));
    const results = toolResults(ws.server, "lead");
    expect(results).toHaveLength(4);
    expect(results.slice(0, 3).map((r) => r.is_error ?? false)).toEqual([false, false, false]);
    expect(results[3]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[3]!.content)).toContain("max_posted_tasks (3)");
    for (const prompt of FIXES.slice(0, 3)) expect(requestsFor(ws.server, prompt)).toHaveLength(2);
    expect(requestsFor(ws.server, FIXES[3]!)).toHaveLength(0);
  });

  it("killed with SIGKILL during the posted tasks and resumed, runs each posted task exactly once", async () => {
    const ws = await workspace(scripts(SLOW_FIXES));
    const first = run(ws);
    // The lead has ended and every posted task is in its Bash call: its session is in the record.
    const running = (t: Summary["tasks"][number]) => t.posted_by === "lead" && t.status === "running" && t.session_id !== null;
    await untilRecord(ws, (record) => record.tasks.filter(running).length === 3 && record.tasks[0]?.status === "succeeded");
    await until(() => SLOW_FIXES.slice(0, 3).every((prompt) => requestsFor(ws.server, prompt).length === 1) || undefined, 30_000, "three Bash calls");
    const children = await claudeDescendants(first.pid!);
    first.kill("SIGKILL");
    await first;
    for (const pid of children) process.kill(pid, "SIGKILL");
    for (const pid of children) await isGone(pid);
    const leadRequests = ws.server.requests.filter((r) => r.script === "lead").length;

    const resumed = await run(ws, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    const summary = await readSummary((await runDir(ws))!);
    expectThreePosted(summary, false);
    expect(summary.tasks[0]!.carried_over).toBe(true);
    // Counted at the model: the lead was not asked again; each posted task had one conversation, and answered once.
    expect(ws.server.requests.filter((r) => r.script === "lead")).toHaveLength(leadRequests);
    for (const [index, prompt] of SLOW_FIXES.slice(0, 3).entries()) {
      const requests = requestsFor(ws.server, prompt);
      // One conversation, continued; a second only where the CLI had not yet written the first to disk when it was
      // killed (the resumed run then says it starts a new one: the CLI has no such conversation to continue).
      const sessions = new Set(requests.map((r) => r.sessionId)).size;
      const restarted = resumed.stdout.includes(`fix-${index + 1}: runs again, its session`);
      expect(sessions, prompt).toBe(restarted ? 2 : 1);
      expect(
        requests.filter((r) => r.step === 1),
        prompt,
      ).toHaveLength(1);
    }
    expect(requestsFor(ws.server, SLOW_FIXES[3]!)).toHaveLength(0);
  });

  it("refuses a prompt past 256 KB as a tool error that names the limit; the record never holds it", async () => {
    const post = (name: string, prompt: string) => ({ tool_use: { name: "mcp__cadre__post_task", input: { name, agent: "fixer", prompt } } });
    const huge = `echo HUGE ${"x".repeat(300 * 1024)}`;
    const scripts = { lead: [post("huge", huge), post("small", "echo SMALL"), { text: "posted" }], fixer: SCRIPTS.fixer };
    const ws = await workspace(scripts);
    const done = await run(ws);
    expect(done.exitCode, done.stderr + done.stdout).toBe(0);
    const dir = (await runDir(ws))!;
    const summary = await readSummary(dir);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["lead", "succeeded"],
      ["small", "succeeded"],
    ]);
    const [refused, posted] = toolResults(ws.server, "lead");
    expect(refused).toMatchObject({ is_error: true });
    expect(JSON.stringify(refused!.content)).toContain("a posted prompt may be at most 256 KB (262,144 bytes)");
    expect(posted?.is_error ?? false).toBe(false);
    // The model's reply is kept as it came (replies.jsonl, for replay); the post itself is in no record of the run's tasks.
    const big = [];
    for (const name of await readdir(dir)) if ((await stat(join(dir, name))).size > 256 * 1024) big.push(name);
    expect(big).toEqual(["replies.jsonl"]);
  });

  it("stops posts of posted tasks at max_post_depth, as a tool error the posted task reads", async () => {
    // The lead posts "deep"; "deep" (a fixer, which may post too) posts "deeper": past max_post_depth 1.
    const post = (name: string) => ({ tool_use: { name: "mcp__cadre__post_task", input: { name, agent: "fixer", prompt: `${name}: go on` } } });
    const scripts = { lead: [post("deep"), { text: "posted" }], fixer: [post("deeper"), { text: "answered: {{tool_result}}" }] };
    const ws = await workspace(scripts, { lines: ["max_post_depth: 1"], fixer: "post_tasks: true," });
    const done = await run(ws);
    expect(done.exitCode, done.stderr + done.stdout).toBe(0);
    const summary = await readSummary((await runDir(ws))!);
    expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null, t.post_depth ?? null])).toEqual([
      ["lead", "succeeded", null, null],
      ["deep", "succeeded", "lead", 1],
    ]);
    const [refused] = toolResults(ws.server, "fixer", "deep: go on");
    expect(refused).toMatchObject({ is_error: true });
    expect(JSON.stringify(refused!.content)).toContain("max_post_depth (1)");
  });
});
