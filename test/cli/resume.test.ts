// `cadre run --resume`: an interrupted, killed or edited run goes on where it stopped, on real claude workers.
// cadre runs "live" against this test's own scripted model, so the test sees every request it gets.
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RecordedRequest, RehearsalServer } from "../../src/rehearsal/server.ts";
import type { Summary } from "../../src/run/record/schema.ts";
import { bin, readRunRecord, readSummary } from "../support/cli.ts";
import { claudeDescendants, isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

// Every task's prompt is a shell command: the model runs it with Bash, then reports its output.
const SCRIPT = [{ tool_use: { name: "Bash", input: { command: "{{prompt}}", description: "run it" } } }, { text: "done: {{tool_result}}" }];

interface Workspace {
  dir: string;
  config: string;
  server: RehearsalServer;
  env: Record<string, string | undefined>;
}

async function workspace(tasks: string[]): Promise<Workspace> {
  const server = await createRehearsal({ swarm: SCRIPT });
  const dir = await tempHome("cadre-resume-");
  const home = join(dir, "home");
  await mkdir(home);
  const config = join(dir, "swarm.yaml");
  await writeConfig(config, tasks);
  // Live mode: the workers inherit this environment, so they talk to this test's server and keep sessions in this HOME.
  const env = { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor("swarm"), home }), PATH: process.env.PATH };
  return { dir, config, server, env };
}

function writeConfig(file: string, tasks: string[]): Promise<void> {
  return writeFile(
    file,
    ["name: resumable", "concurrency: 2", "defaults: { allowed_tools: [Bash] }", "tasks:", ...tasks.map((t) => `  - ${t}`), ""].join("\n"),
  );
}

function run(ws: Workspace, args: string[] = []) {
  return execa("node", [bin, "run", ws.config, ...args], { cwd: ws.dir, env: ws.env, extendEnv: false, reject: false });
}

async function runDirs(ws: Workspace): Promise<string[]> {
  const root = join(ws.dir, ".cadre", "runs");
  return (await readdir(root)).map((name) => join(root, name));
}

/** Waits until the run's record (summary.json written at the start, and its journal as sessions start and tasks end) satisfies `check`. */
async function untilRecord(ws: Workspace, check: (record: Summary) => boolean): Promise<Summary> {
  return until(
    async () => {
      const [dir] = existsSync(join(ws.dir, ".cadre", "runs")) ? await runDirs(ws) : [];
      const record = dir ? await readRunRecord(dir).catch(() => undefined) : undefined;
      return record && check(record) ? record : undefined;
    },
    45_000,
    "the run's record",
  );
}

/** Waits until the CLI has stored a tool call in the session's file (under the workers' HOME): a kill from here on is mid-tool. */
async function untilToolUseStored(ws: Workspace, session: string): Promise<void> {
  const projects = join(ws.env.HOME!, ".claude", "projects");
  const stored = async () =>
    (await readdir(projects, { recursive: true }).catch(() => [] as string[])).find((name) => name.endsWith(`${session}.jsonl`));
  const file = join(projects, await until(stored, 45_000, "the session's file"));
  await expect.poll(() => readFile(file, "utf8"), { timeout: 45_000 }).toContain('"tool_use"');
}

/** Waits until the run's record shows `task` succeeded. */
async function untilSucceeded(ws: Workspace, task: string): Promise<void> {
  await untilRecord(ws, (record) => record.tasks.some((t) => t.name === task && t.status === "succeeded"));
}

/** The model requests whose conversation began with this prompt. */
function requestsFor(server: RehearsalServer, prompt: string): RecordedRequest[] {
  return server.requests.filter((request) => JSON.stringify(request.messages[0]?.content ?? "").includes(prompt));
}

const TASKS = [
  "{ name: first, prompt: 'echo FIRST' }",
  "{ name: slow, prompt: 'sleep 8 && echo SLOW' }",
  "{ name: last, prompt: 'echo LAST {{results.first}}', depends_on: [first, slow] }",
];

/** Runs TASKS and presses Ctrl-C once "first" has succeeded, while "slow" is in its Bash call. */
async function interruptAfterFirst(ws: Workspace): Promise<{ dir: string; interrupted: Summary; slowSession: string }> {
  const first = run(ws);
  // Both conditions, from the record itself: on a busy machine "first" can end before "slow" has a session.
  await untilRecord(ws, (record) => record.tasks[0]?.status === "succeeded" && record.tasks[1]?.session_id != null);
  first.kill("SIGINT");
  expect((await first).exitCode).toBe(130);
  const [dir] = await runDirs(ws);
  const interrupted = await readSummary(dir!);
  expect(interrupted.tasks.map((t) => [t.name, t.status])).toEqual([
    ["first", "succeeded"],
    ["slow", "cancelled"],
    ["last", "cancelled"],
  ]);
  const slowSession = interrupted.tasks[1]!.session_id;
  expect(slowSession).toBeTruthy();
  return { dir: dir!, interrupted, slowSession: slowSession! };
}

describe("cadre run --resume", () => {
  it("goes on after Ctrl-C: the finished task is not run again, the interrupted one continues its conversation", async () => {
    const ws = await workspace(TASKS);
    const { dir, interrupted, slowSession } = await interruptAfterFirst(ws);
    const firstRequests = requestsFor(ws.server, "echo FIRST").length;

    const resumed = await run(ws, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("first: carried over");
    expect(resumed.stdout).toContain(`slow: runs again, it was cancelled before; continuing session ${slowSession}`);
    const summary = await readSummary(dir!);
    expect(summary.tasks.map((t) => [t.name, t.status, t.carried_over ?? false])).toEqual([
      ["first", "succeeded", true],
      ["slow", "succeeded", false],
      ["last", "succeeded", false],
    ]);
    expect(summary).toMatchObject({ attempt: 2, complete: true, attempt_totals: { tasks_run: 2 } });
    expect(summary.totals.cost_usd).toBeGreaterThan(summary.attempt_totals!.cost_usd);
    // The whole run's totals: the first attempt's, and what this one ran.
    expect(summary.totals.cost_usd).toBeCloseTo(interrupted.totals.cost_usd + summary.attempt_totals!.cost_usd, 9);
    const ranNow = summary.tasks.filter((task) => !task.carried_over);
    expect(summary.totals.num_turns).toBe(interrupted.totals.num_turns + ranNow.reduce((turns, task) => turns + task.num_turns, 0));
    const output = (record: Summary) => record.totals.usage.output_tokens;
    expect(output(summary)).toBe(output(interrupted) + ranNow.reduce((tokens, task) => tokens + task.usage.output_tokens, 0));
    // No request for the finished task in the second attempt; the slow task's went on in its old conversation.
    expect(requestsFor(ws.server, "echo FIRST")).toHaveLength(firstRequests);
    const continued = requestsFor(ws.server, "sleep 8 && echo SLOW").at(-1)!;
    expect(continued.sessionId).toBe(slowSession);
    expect(summary.tasks[2]!.text).toBe("done: LAST done: FIRST");
  });

  it("a task whose session is not where it runs now (another host, another HOME) starts anew instead of failing", async () => {
    const ws = await workspace(TASKS);
    const { dir, slowSession } = await interruptAfterFirst(ws);

    // The resumed run's workers keep their sessions under another HOME, as on another host of a distributed run.
    const elsewhere = join(ws.dir, "other-home");
    await mkdir(elsewhere);
    const resumed = await run({ ...ws, env: { ...ws.env, HOME: elsewhere, USERPROFILE: elsewhere } }, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    expect(resumed.stdout).toContain(`slow: runs again, it was cancelled before; continuing session ${slowSession}`);
    expect(resumed.stdout).toContain(`slow: runs again, its session ${slowSession} is not where it runs now; it starts a new one`);
    const summary = await readSummary(dir!);
    expect(summary.tasks.map((t) => [t.name, t.status, t.error?.code ?? null])).toEqual([
      ["first", "succeeded", null],
      ["slow", "succeeded", null],
      ["last", "succeeded", null],
    ]);
    const slow = summary.tasks[1]!;
    expect(slow.session_id).not.toBe(slowSession);
    expect(requestsFor(ws.server, "sleep 8 && echo SLOW").at(-1)!.sessionId).toBe(slow.session_id);
  });

  it("resumes a run that was killed with SIGKILL from the record it had written", async () => {
    const ws = await workspace(TASKS);
    const first = run(ws);
    await untilSucceeded(ws, "first");
    const children = await claudeDescendants(first.pid!);
    first.kill("SIGKILL");
    await first;
    // cadre cannot end its workers once SIGKILLed itself; end them here so the resumed run is alone.
    for (const pid of children) process.kill(pid, "SIGKILL");
    for (const pid of children) await isGone(pid);
    const [dir] = await runDirs(ws);
    const record = await readRunRecord(dir!);
    expect(record.complete).toBe(false);
    expect(record.tasks.find((t) => t.name === "first")?.status).toBe("succeeded");

    const resumed = await run(ws, ["--resume", dir!]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const summary = await readSummary(dir!);
    expect(summary.tasks.every((t) => t.status === "succeeded")).toBe(true);
    expect(summary.tasks.find((t) => t.name === "first")?.carried_over).toBe(true);
    expect(requestsFor(ws.server, "echo FIRST")).toHaveLength(2);
  });

  it("a run killed with SIGKILL before any task ended resumes, continuing the running tasks' sessions", async () => {
    const ws = await workspace([
      "{ name: slow, prompt: 'echo STARTED && sleep 8 && echo SLOW' }",
      "{ name: after, prompt: 'echo AFTER', depends_on: [slow] }",
    ]);
    const first = run(ws);
    // The record names the running task's session as soon as the CLI has one, long before the task ends.
    const mid = await untilRecord(ws, (record) => record.tasks[0]?.status === "running" && record.tasks[0].session_id !== null);
    expect(mid.complete).toBe(false);
    expect(mid.tasks.map((t) => [t.name, t.status, t.finished_at])).toEqual([
      ["slow", "running", null],
      ["after", "pending", null],
    ]);
    expect(mid.tasks[0]!.started_at).not.toBeNull();
    const session = mid.tasks[0]!.session_id!;
    // Killed mid-turn, once the CLI has stored the model's Bash call in its session file (under the workers' HOME).
    await untilToolUseStored(ws, session);
    const children = await claudeDescendants(first.pid!);
    first.kill("SIGKILL");
    await first;
    for (const pid of children) process.kill(pid, "SIGKILL");
    for (const pid of children) await isGone(pid);

    const resumed = await run(ws, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`slow: runs again, it was running when the run stopped; continuing session ${session}`);
    const [dir] = await runDirs(ws);
    const summary = await readSummary(dir!);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["slow", "succeeded"],
      ["after", "succeeded"],
    ]);
    // The resumed turn went on in the same conversation: the first prompt and the model's Bash call are in it.
    const continued = requestsFor(ws.server, "echo STARTED").at(-1)!;
    expect(continued.sessionId).toBe(session);
    expect(JSON.stringify(continued.messages)).toContain("tool_use");
  });

  it("a loop killed with SIGKILL in round 2 resumes in round 2: round 1 is not run again, round 2 goes on in its session", async () => {
    const ws = await workspace([]);
    await writeFile(
      ws.config,
      [
        "name: looping",
        "defaults: { allowed_tools: [Bash] }",
        "tasks:",
        "  - { name: write, prompt: 'echo DRAFT-1' }",
        `  - { name: review, depends_on: [write], prompt: 'echo "{{results.write}}" | grep -q DRAFT-2 && echo APPROVED || echo REVISE' }`,
        "loops:",
        "  - tasks: [write, review]",
        "    until: results.review.text.contains('APPROVED')",
        "    max_rounds: 3",
        "    fresh: true",
        "    next_prompts: { write: 'echo ROUND-2 && sleep 8 && echo DRAFT-2' }",
        "",
      ].join("\n"),
    );
    const first = run(ws);
    const mid = await untilRecord(ws, (record) => record.tasks.some((t) => t.name === "write#2" && t.status === "running" && t.session_id !== null));
    expect(mid.tasks.filter((t) => t.round === 1).map((t) => [t.name, t.status])).toEqual([
      ["write#1", "succeeded"],
      ["review#1", "succeeded"],
    ]);
    expect(mid.loops).toMatchObject([{ name: "write+review", status: "running", rounds: 2 }]);
    // Killed while round 2's writer runs its tool (the CLI has stored the call): the draft of round 2 is cut short.
    const roundTwoSession = mid.tasks.find((t) => t.name === "write#2")!.session_id!;
    await untilToolUseStored(ws, roundTwoSession);
    const children = await claudeDescendants(first.pid!);
    first.kill("SIGKILL");
    await first;
    for (const pid of children) process.kill(pid, "SIGKILL");
    for (const pid of children) await isGone(pid);
    const roundOne = [requestsFor(ws.server, "echo DRAFT-1").length, requestsFor(ws.server, "done: DRAFT-1").length];
    expect(roundOne.every((count) => count > 0)).toBe(true);

    const resumed = await run(ws, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const [dir] = await runDirs(ws);
    const summary = await readSummary(dir!);
    // Round 2 went on in its session, where its tool call ended with the process, so its draft lacks DRAFT-2 and the
    // reviewer asks again; round 3 (fresh) writes it whole and is approved.
    expect(summary.tasks.map((t) => [t.name, t.status, t.carried_over ?? false])).toEqual([
      ["write", "succeeded", false],
      ["write#1", "succeeded", true],
      ["write#2", "succeeded", false],
      ["write#3", "succeeded", false],
      ["review", "succeeded", false],
      ["review#1", "succeeded", true],
      ["review#2", "succeeded", false],
      ["review#3", "succeeded", false],
    ]);
    expect(summary.tasks.find((t) => t.name === "write#2")?.session_id).toBe(roundTwoSession);
    expect(summary.loops).toMatchObject([{ status: "succeeded", rounds: 3, error: null }]);
    expect(summary.tasks.find((t) => t.name === "review")?.text).toBe("done: APPROVED");
    // Round 1 made no request in the resumed attempt; round 2's writer continued its conversation, with its tool call in it.
    expect([requestsFor(ws.server, "echo DRAFT-1").length, requestsFor(ws.server, "done: DRAFT-1").length]).toEqual(roundOne);
    const continued = requestsFor(ws.server, "echo ROUND-2").filter((request) => request.sessionId === roundTwoSession);
    expect(continued.length).toBeGreaterThan(1);
    expect(JSON.stringify(continued.at(-1)!.messages)).toContain("tool_use");
  });

  it("a succeeded task whose time limit or retries alone changed is kept; a changed result names the task it came from", async () => {
    const ws = await workspace([
      "{ name: first, prompt: 'echo FIRST' }",
      "{ name: last, prompt: 'echo LAST {{results.first}}', depends_on: [first] }",
    ]);
    expect((await run(ws)).exitCode).toBe(0);
    await writeConfig(ws.config, [
      "{ name: first, prompt: 'echo FIRST', timeout_s: 300, retries: 0 }",
      "{ name: last, prompt: 'echo LAST {{results.first}}', depends_on: [first] }",
    ]);
    const kept = await run(ws, ["--resume"]);
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(kept.stdout).toContain("first: carried over");
    expect(kept.stdout).toContain("last: carried over");

    await writeConfig(ws.config, [
      "{ name: first, prompt: 'echo FIRST AGAIN' }",
      "{ name: last, prompt: 'echo LAST {{results.first}}', depends_on: [first] }",
    ]);
    const rerun = await run(ws, ["--resume"]);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain("first: runs again, its prompt changed");
    expect(rerun.stdout).toContain("last: runs again, a result it uses changed: first");
  });

  it("an edited prompt re-runs exactly that task and the tasks that use its result", async () => {
    const ws = await workspace([
      "{ name: first, prompt: 'echo FIRST' }",
      "{ name: other, prompt: 'echo OTHER' }",
      TASKS[2]!.replace("slow", "other"),
    ]);
    expect((await run(ws)).exitCode).toBe(0);
    const requestsBefore = ws.server.requests.length;

    await writeConfig(ws.config, [
      "{ name: first, prompt: 'echo FIRST, EDITED' }",
      "{ name: other, prompt: 'echo OTHER' }",
      TASKS[2]!.replace("slow", "other"),
    ]);
    const resumed = await run(ws, ["--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("first: runs again, its prompt changed");
    const [dir] = await runDirs(ws);
    const summary = await readSummary(dir!);
    expect(summary.tasks.map((t) => [t.name, t.carried_over ?? false])).toEqual([
      ["first", false],
      ["other", true],
      ["last", false],
    ]);
    expect(summary.tasks[2]!.text).toBe("done: LAST done: FIRST, EDITED");
    // Two tasks ran again, two model requests each.
    expect(ws.server.requests.length - requestsBefore).toBe(4);
  });
});
