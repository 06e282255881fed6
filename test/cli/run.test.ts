// `cadre run` through the real command line: exit codes, summary.json, plain lines, the TTY view.
// Signals (Ctrl-C, SIGTERM, hang-up, SIGKILL) are in test/reliability/run-signals.test.ts.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bin, cadre, decodeTranscript, readSummary, repo, swarmFolder } from "../support/cli.ts";

const folder = swarmFolder("cadre-run-");
const config = folder.config;

const ESC = "\u001b";

describe("cadre run", () => {
  it("prints a reply that carries terminal escape sequences as text, in its lines and its final table", async () => {
    const file = await config("hostile.yaml", [
      "name: hostile",
      "tasks:",
      "  - { name: say, prompt: say hi }",
      "rehearsal:",
      '  say: [{ text: "\\e]0;OWNED\\a\\e[2Jhello" }]',
    ]);
    const run = await cadre(["run", file, "--rehearse", "--out", folder.path("hostile-out")]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).not.toContain(ESC);
    expect(run.stdout).not.toContain("\u0007");
    expect(run.stdout).toContain("\\x1b]0;OWNED\\x07\\x1b[2Jhello");
    // The record keeps the reply as the model gave it: only what is printed is made safe.
    expect((await readSummary(folder.path("hostile-out"))).tasks[0]!.text).toBe("\u001b]0;OWNED\u0007\u001b[2Jhello");
  });

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
    const out = folder.path("failing-out");
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
    // The failed task keeps its session, to resume or inspect it.
    expect(summary.tasks[1]?.session_id).toBe((broken.at(-1) as { session_id?: string }).session_id);

    // The supervisor is on the record too: its own entry and transcript, and the totals are the sum of all entries.
    expect(summary.sessions).toEqual([
      expect.objectContaining({ role: "supervisor", name: "supervisor:guard", agent: "guard", parent: "ok", status: null }),
    ]);
    const guard = summary.sessions[0]!;
    expect(guard.cost_usd).toBeGreaterThan(0);
    const guardTranscript = await decodeTranscript(join(out, guard.transcript!));
    expect(guardTranscript.find((m) => m.type === "result")).toMatchObject({ session_id: guard.session_id, result: "DENY no shell today" });
    const listed = [...summary.tasks, ...summary.sessions];
    expect(summary.totals.cost_usd).toBeCloseTo(
      listed.reduce((sum, entry) => sum + entry.cost_usd, 0),
      10,
    );
    expect(summary.totals.num_turns).toBe(listed.reduce((sum, entry) => sum + entry.num_turns, 0));

    // Not a terminal: timestamped plain lines, then the final table; no escape codes anywhere.
    expect(run.stdout).not.toContain(ESC);
    const [log, table] = run.stdout.split("\n\n");
    for (const line of log!.split("\n")) expect(line).toMatch(/^\d\d:\d\d:\d\d \S/);
    expect(log).toContain('after-broken: skipped: dependency "broken" failed');
    expect(log).toMatch(/broken: failed \(\d+ turns?, .*scripted outage/);
    expect(table).toMatch(/^task +status +turns +cost +cached +queued +time +result\nok +succeeded/);
    expect(run.stdout).toContain(`record: ${join(out, "summary.json")}`);
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
    const out = folder.path("bad-out");
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
      "cadre run: no swarm file or workflow script given; usage: cadre run <swarm.(yaml|json) | script.js> | --workflow NAME [--args JSON|@file.json] [--concurrency N] [--out DIR | --resume [RUN-DIR | wf_<id>]] [--rehearse] [--json] [--redis URL] [--ui [HOST:PORT]] [--otel] [--replay RUN-DIR] (cadre run --help lists them all)",
    ]);
  });

  it("--rehearse shows what would run: costs marked simulated, budget_usd not applied unless --rehearse-budget", async () => {
    const file = await config("budget.yaml", [
      "concurrency: 1",
      "budget_usd: 0.0001",
      "tasks:",
      "  - { name: one, prompt: hi, priority: 2 }",
      "  - { name: two, prompt: hi, priority: 1 }",
      "  - { name: three, prompt: hi }",
      "rehearsal:",
      "  one: [{ text: done one }]",
      "  two: [{ text: done two }]",
      "  three: [{ text: done three }]",
    ]);
    const out = folder.path("budget-out");
    const run = await cadre(["run", file, "--rehearse", "--out", out]);
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = await readSummary(out);
    expect(summary.tasks.map((t) => t.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(summary.cost_simulated).toBe(true);
    expect(summary.budget_usd, "the record says no budget was applied").toBeNull();
    expect(summary.totals.cost_usd).toBeGreaterThan(0.0001);
    expect(run.stdout).toMatch(/^one +succeeded +1 +~\$\d/m);
    expect(run.stdout).toMatch(/^total .*~\$[\d.]+ \(simulated\)/m);

    // Asked for, the budget stops the rehearsal on its simulated cost.
    const capped = folder.path("budget-capped-out");
    const second = await cadre(["run", file, "--rehearse", "--rehearse-budget", "--out", capped]);
    expect(second.exitCode).toBe(1);
    const cappedSummary = await readSummary(capped);
    expect(cappedSummary.tasks.map((t) => t.status)).toEqual(["succeeded", "skipped", "skipped"]);
    expect(cappedSummary.budget_usd).toBe(0.0001);
    expect(second.stdout).toContain("budget reached");
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("on a terminal, redraws the view in place and respects NO_COLOR", async () => {
    const out = folder.path("tty-out");
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
