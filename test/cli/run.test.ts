// `cadre run` through the real command line: exit codes, summary.json, plain lines, the TTY view, Ctrl-C.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { descendants, isGone } from "../support/processes.ts";
import { bin, cadre, claudeDescendants, decodeTranscript, readSummary, repo } from "./run-support.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-run-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function config(name: string, lines: string[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

const ESC = "\u001b";

describe("cadre run", () => {
  it("exits 1 when a task fails: the failure, the skipped dependant and a supervised denial in summary.json, plain lines on a pipe", async () => {
    const file = await config("failing.yaml", [
      "name: failing",
      "concurrency: 2",
      "agents:",
      "  guard: { description: Decides shell commands, prompt: Answer ALLOW or DENY. }",
      "hooks:",
      "  PreToolUse:",
      "    - { matcher: Bash, supervisor: guard }",
      "tasks:",
      "  - { name: ok, prompt: say hi }",
      "  - { name: broken, prompt: say hi }",
      "  - { name: after-broken, prompt: 'use {{results.broken}}', depends_on: [broken] }",
      "rehearsal:",
      "  ok:",
      "    - tool_use: { name: Bash, input: { command: echo supervised, description: echo } }",
      "    - text: 'ok after: {{tool_result}}'",
      "  broken:",
      "    - { text: never, fail: { status: 400, times: 3, message: scripted outage } }",
      "  after-broken: [{ text: never }]",
      "  'supervisor:guard': [{ text: 'DENY no shell today' }]",
    ]);
    const out = join(dir, "failing-out");
    const run = await cadre(["run", file, "--rehearse", "--out", out]);
    expect(run.exitCode, run.stderr).toBe(1);

    const summary = await readSummary(out);
    expect(summary.exit_code).toBe(1);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["ok", "succeeded"],
      ["broken", "failed"],
      ["after-broken", "skipped"],
    ]);
    // The supervisor played "supervisor:guard" and its DENY reached the model as the tool's error.
    expect(summary.tasks[0]?.text).toBe("ok after: PreToolUse:Bash hook error: supervisor guard: no shell today");
    expect(summary.tasks[1]?.error?.message).toContain("scripted outage");
    expect(summary.tasks[2]?.error).toEqual({ code: "DEPENDENCY_FAILED", message: 'dependency "broken" failed' });
    expect(summary.tasks[2]?.transcript).toBeNull();
    expect(summary.totals).toMatchObject({ tasks: 3, succeeded: 1, failed: 1, skipped: 1, cancelled: 0 });
    const broken = await decodeTranscript(join(out, summary.tasks[1]!.transcript!));
    expect(broken.at(-1)).toMatchObject({ type: "result", is_error: true });

    // Not a terminal: timestamped plain lines, then the final table; no escape codes anywhere.
    expect(run.stdout).not.toContain(ESC);
    const [log, table] = run.stdout.split("\n\n");
    for (const line of log!.split("\n")) expect(line).toMatch(/^\d\d:\d\d:\d\d \S/);
    expect(log).toContain('after-broken: skipped: dependency "broken" failed');
    expect(log).toMatch(/broken: failed \(\d+ turns?, .*scripted outage/);
    expect(table).toMatch(/^task +status +turns +cost +time +result\nok +succeeded/);
    expect(run.stdout).toContain(`summary: ${join(out, "summary.json")}`);
  });

  it("exits 2 with the config's issues, before starting anything", async () => {
    const file = await config("bad.yaml", [
      "agents:",
      "  critic: { description: Critic, prompt: You criticise. }",
      "tasks:",
      "  - { name: a, prompt: hi }",
      "rehearsal:",
      "  a: [{ text: hi }]",
      "  'peer:critc': [{ text: hi }]",
    ]);
    const out = join(dir, "bad-out");
    const run = await cadre(["run", file, "--rehearse", "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.split("\n")).toEqual([
      'rehearsal["peer:critc"]: unknown agent "critc" (did you mean "critic"?)',
      `cadre run: ${file} is not valid (1 problem)`,
    ]);
    expect(existsSync(out)).toBe(false);

    // Valid, but --rehearse needs a script for every task.
    const unscripted = await config("unscripted.yaml", [
      "tasks:",
      "  - { name: a, prompt: hi }",
      "  - { name: b, prompt: hi }",
      "rehearsal:",
      "  a: [{ text: hi }]",
    ]);
    const second = await cadre(["run", unscripted, "--rehearse", "--out", out]);
    expect([second.exitCode, second.stderr]).toEqual([
      2,
      `rehearsal: no script for task "b"\ncadre run: ${unscripted} is not valid for --rehearse (1 problem)`,
    ]);

    const usage = await cadre(["run"]);
    expect([usage.exitCode, usage.stderr]).toEqual([
      2,
      "cadre run: no config file given; usage: cadre run <config.(yaml|json)> [--concurrency N] [--out DIR] [--rehearse] [--json] [--ui [HOST:PORT]]",
    ]);
  });

  it("Ctrl-C stops the run: no claude process is left and summary.json marks the unfinished tasks cancelled", async () => {
    const file = await config("slow.yaml", [
      "tasks:",
      "  - { name: quick, prompt: hi }",
      "  - { name: slow, prompt: hi }",
      "  - { name: later, prompt: 'after {{results.slow}}', depends_on: [slow] }",
      "rehearsal:",
      "  quick: [{ text: done quickly }]",
      "  slow: [{ text: too late, delay_ms: 30000 }]",
      "  later: [{ text: never }]",
    ]);
    const out = join(dir, "slow-out");
    const child = cadre(["run", file, "--rehearse", "--json", "--out", out]);
    const events: { type: string; task?: { name: string }; result?: { status: string } }[] = [];
    let buffered = "";
    const seen = new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        for (const line of lines) events.push(JSON.parse(line));
        const finished = (name: string) => events.some((e) => e.type === "task_finished" && e.task?.name === name);
        const started = (name: string) => events.some((e) => e.type === "task_started" && e.task?.name === name);
        if (finished("quick") && started("slow")) resolve();
      });
    });
    await seen;
    const workers = await claudeDescendants(child.pid!);
    expect(workers.length).toBeGreaterThanOrEqual(1);
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode).toBe(130);
    for (const pid of workers) expect(await isGone(pid), `claude ${pid} survived`).toBe(true);

    const summary = await readSummary(out);
    expect(summary.interrupted).toBe(true);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["quick", "succeeded"],
      ["slow", "cancelled"],
      ["later", "cancelled"],
    ]);
    expect(summary.tasks[0]?.text).toBe("done quickly");
    expect(summary.tasks[2]?.error?.message).toBe("interrupted before it started");
    // --json: stdout is nothing but the orchestrator's events; the table went to stderr.
    expect(events.some((e) => e.type === "task_finished" && e.task?.name === "slow" && e.result?.status === "cancelled")).toBe(true);
    expect(run.stderr).toContain("interrupted: stopping the workers");
    expect(run.stderr).toMatch(/total {2}1\/3 succeeded, 2 cancelled, .*interrupted/);
  });

  it("a second Ctrl-C kills at once, even a worker that ignores SIGTERM, and still writes summary.json", async () => {
    // Only a fake CLI can hang like this: it answers initialize, then ignores prompts, stdin closing and SIGTERM.
    const fake = join(dir, "hanging-claude");
    await writeFile(fake, `#!/bin/sh\nFAKE_CLAUDE_MODE=hang exec node ${join(repo, "test/fixtures/fake-claude.mjs")} "$@"\n`, { mode: 0o755 });
    const file = await config("hang.yaml", ["tasks:", "  - { name: stuck, prompt: hi }", "rehearsal:", "  stuck: [{ text: unused }]"]);
    const out = join(dir, "hang-out");
    const child = execa("node", [bin, "run", file, "--rehearse", "--json", "--out", out], {
      cwd: repo,
      reject: false,
      env: { CADRE_CLAUDE_BIN: fake },
    });
    let stdout = "";
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes('"type":"task_started"')) resolve();
      });
    });
    const workers = (await descendants(child.pid!)).map((p) => p.pid);
    expect(workers.length).toBeGreaterThanOrEqual(1);
    child.kill("SIGINT");
    // The graceful stop now waits on a worker that will not stop (about 9 s of grace periods).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const secondAt = Date.now();
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode).toBe(130);
    expect(Date.now() - secondAt).toBeLessThan(4_000);
    for (const pid of workers) expect(await isGone(pid), `worker ${pid} survived`).toBe(true);
    const summary = await readSummary(out);
    expect(summary.interrupted).toBe(true);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([["stuck", "cancelled"]]);
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("on a terminal, redraws the view in place and respects NO_COLOR", async () => {
    const out = join(dir, "tty-out");
    const command = `stty cols 100 rows 40; NO_COLOR=1 node ${bin} run examples/guarded-shell.yaml --rehearse --out ${out}`;
    const run = spawnSync("script", ["-qec", command, "/dev/null"], { cwd: repo, encoding: "utf8", timeout: 50_000 });
    expect(run.status, run.stderr).toBe(0);
    // In place: the cursor moves up and lines are erased (log-update), and the frame has the view's parts.
    expect(run.stdout).toMatch(/\u001b\[\d+A/);
    expect(run.stdout).toContain("\u001b[2K");
    expect(run.stdout).toMatch(/cadre guarded-shell {2}\d\/1 done/);
    expect(run.stdout).toContain("rate limit: ok");
    expect(run.stdout).toMatch(/total {2}1\/1 succeeded/);
    // NO_COLOR: no color codes (SGR), only cursor movement.
    expect(run.stdout).not.toMatch(/\u001b\[(3\d|1|2|22|39)m/);
    expect((await readSummary(out)).tasks[0]?.status).toBe("succeeded");
  });
});
