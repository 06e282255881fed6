// `cadre run` stopped by a signal, however it comes: Ctrl-C (SIGINT), SIGTERM, the terminal
// closing (SIGHUP), a second Ctrl-C, SIGKILL. No claude process or tool it started is left,
// no rehearsal HOME is left in the temp directory, and summary.json is written whenever
// cadre can still write it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, cadre, readSummary, repo } from "../support/cli.ts";
import { descendants } from "../support/processes.ts";
import { MINUTE_OF_BASH, rehearsalHomesLeft, survivors, treeWithBashTool } from "../support/reliability.ts";
import { until } from "../support/wait.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-run-signals-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A swarm of three: one done quickly, one busy in a minute-long Bash tool, one waiting on the busy one. */
async function busySwarm(name: string): Promise<{ file: string; out: string; tmp: string }> {
  const file = join(dir, `${name}.yaml`);
  const tmp = join(dir, `${name}-tmp`);
  await mkdir(tmp);
  const yaml = {
    defaults: { allowed_tools: ["Bash"] },
    tasks: [
      { name: "quick", prompt: "hi" },
      { name: "busy", prompt: "hi" },
      { name: "later", prompt: "after {{results.busy}}", depends_on: ["busy"] },
    ],
    rehearsal: { quick: [{ text: "done quickly" }], busy: [{ tool_use: MINUTE_OF_BASH }, { text: "too late" }], later: [{ text: "never" }] },
  };
  await writeFile(file, JSON.stringify(yaml));
  return { file, out: join(dir, `${name}-out`), tmp };
}

function startRun(args: string[], tmp: string, env: Record<string, string> = {}) {
  return cadre(["run", ...args], { env: { TMPDIR: tmp, ...env } });
}

const EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

describe("cadre run under signals", () => {
  it("Ctrl-C on the terminal reaches cadre and its workers at once: the stopped task says interrupted and keeps its session id", async () => {
    const { file, out, tmp } = await busySwarm("group");
    // Its own process group, as a shell gives a foreground job: the terminal's Ctrl-C goes to every process in it.
    const child = execa("node", [bin, "run", file, "--rehearse", "--out", out], { cwd: repo, reject: false, detached: true, env: { TMPDIR: tmp } });
    const tree = await treeWithBashTool(child.pid!);
    process.kill(-child.pid!, "SIGINT");
    const run = await child;
    expect(run.exitCode, run.stderr).toBe(130);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    const busy = (await readSummary(out)).tasks.find((task) => task.name === "busy");
    // Not the CLI's internal "[ede_diagnostic] …" words, nor a worker exit: the run was interrupted.
    expect([busy?.status, busy?.error]).toEqual(["cancelled", { code: "INTERRUPTED", message: "interrupted" }]);
    expect(busy?.session_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "%s stops gracefully: summary.json marks the unfinished tasks cancelled, nothing is left, exit 128+signal",
    async (signal) => {
      const { file, out, tmp } = await busySwarm(`graceful-${signal}`);
      const child = startRun([file, "--rehearse", "--json", "--out", out], tmp);
      let stdout = "";
      child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      // The quick task has finished and the busy one is in its Bash tool.
      await until(() => (/"type":"task_finished".*"name":"quick"/.test(stdout) ? true : undefined), 45_000, "the quick task's end");
      const tree = await treeWithBashTool(child.pid!);
      child.kill(signal);
      const run = await child;
      expect(run.exitCode, run.stderr).toBe(EXIT_CODES[signal]);
      expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
      expect(await rehearsalHomesLeft(tmp)).toEqual([]);

      const summary = await readSummary(out);
      expect(summary.interrupted).toBe(true);
      expect(summary.exit_code).toBe(EXIT_CODES[signal]);
      expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
        ["quick", "succeeded"],
        ["busy", "cancelled"],
        ["later", "cancelled"],
      ]);
      expect(summary.tasks[0]?.text).toBe("done quickly");
      expect(summary.tasks[2]?.error?.message).toBe("interrupted before it started");
      // --json: stdout is nothing but the orchestrator's events; notices and the table went to stderr.
      const events = run.stdout.split("\n").map((line) => JSON.parse(line) as { type: string; task?: { name: string }; result?: { status: string } });
      expect(events.some((e) => e.type === "task_finished" && e.task?.name === "busy" && e.result?.status === "cancelled")).toBe(true);
      expect(run.stderr).toContain("interrupted: stopping the workers");
      expect(run.stderr).toMatch(/total {2}1\/3 succeeded, 2 cancelled, .*interrupted/);
    },
  );

  it("a second Ctrl-C kills at once, even a worker that ignores SIGTERM, and still writes summary.json", async () => {
    // Only a fake CLI can hang like this: it answers initialize, then ignores prompts, stdin closing and SIGTERM.
    const fake = join(dir, "hanging-claude");
    await writeFile(fake, `#!/bin/sh\nFAKE_CLAUDE_MODE=hang exec node ${join(repo, "test/fixtures/fake-claude.mjs")} "$@"\n`, { mode: 0o755 });
    const file = join(dir, "hang.yaml");
    await writeFile(file, JSON.stringify({ tasks: [{ name: "stuck", prompt: "hi" }], rehearsal: { stuck: [{ text: "unused" }] } }));
    const tmp = join(dir, "hang-tmp");
    await mkdir(tmp);
    const out = join(dir, "hang-out");
    const child = startRun([file, "--rehearse", "--json", "--out", out], tmp, { CADRE_CLAUDE_BIN: fake });
    let stdout = "";
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes('"type":"task_started"')) resolve();
      });
    });
    const tree = await descendants(child.pid!);
    expect(tree.length).toBeGreaterThanOrEqual(1);
    child.kill("SIGINT");
    // The graceful stop now waits on a worker that will not stop (about 9 s of grace periods).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const secondAt = Date.now();
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode).toBe(130);
    expect(Date.now() - secondAt).toBeLessThan(4_000);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    expect(await rehearsalHomesLeft(tmp, 5_000)).toEqual([]);
    const summary = await readSummary(out);
    expect(summary.interrupted).toBe(true);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([["stuck", "cancelled"]]);
  });

  it("SIGKILL: every claude and every tool it runs ends within 5 s, and the rehearsal HOME is removed", async () => {
    const { file, out, tmp } = await busySwarm("sigkill");
    const child = startRun([file, "--rehearse", "--json", "--out", out], tmp);
    const tree = await treeWithBashTool(child.pid!);
    child.kill("SIGKILL");
    const killedAt = Date.now();
    await child;
    expect(await survivors(tree, killedAt + 5_000)).toEqual([]);
    expect(await rehearsalHomesLeft(tmp, 5_000)).toEqual([]);
  });

  it("SIGKILL while a hook command runs: the hook command ends too within 5 s, with the claude that waits on it", async () => {
    const file = join(dir, "hooked.yaml");
    const tmp = join(dir, "hooked-tmp");
    await mkdir(tmp);
    const yaml = {
      defaults: { allowed_tools: ["Bash"] },
      hooks: { PreToolUse: [{ matcher: "Bash", command: "sleep 300", timeout_s: 600 }] },
      tasks: [{ name: "guarded", prompt: "hi" }],
      rehearsal: { guarded: [{ tool_use: { name: "Bash", input: { command: "true", description: "nothing" } } }, { text: "done" }] },
    };
    await writeFile(file, JSON.stringify(yaml));
    const child = startRun([file, "--rehearse", "--json", "--out", join(dir, "hooked-out")], tmp);
    // The hook command is cadre's own child (not the CLI's): a `sleep` below cadre.
    const tree = await treeWithBashTool(child.pid!);
    child.kill("SIGKILL");
    const killedAt = Date.now();
    await child;
    expect(await survivors(tree, killedAt + 5_000)).toEqual([]);
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)("closing its terminal is a hang-up: the run stops gracefully and writes summary.json with exit code 129", async () => {
    const { file, out, tmp } = await busySwarm("hangup");
    // script(1) gives cadre a terminal; killing script closes it, as closing a terminal window does.
    const terminal = execa("script", ["-qec", `stty cols 120 rows 40; node ${bin} run ${file} --rehearse --out ${out}`, "/dev/null"], {
      cwd: repo,
      reject: false,
      env: { TMPDIR: tmp, SHELL: "/bin/sh" },
    });
    let screen = "";
    terminal.stdout!.on("data", (chunk: Buffer) => (screen += chunk.toString("utf8")));
    // The node below script whose parent is no node: cadre's reaper, also node, is cadre's child (pids, which wrap, say nothing).
    const cadre = await until(
      async () => {
        const nodes = (await descendants(terminal.pid!)).filter((p) => p.comm === "node");
        return nodes.find((p) => !nodes.some((other) => other.pid === p.ppid))?.pid;
      },
      20_000,
      "cadre under script",
    );
    // The view's title says when the quick task is done; the busy one is then in its Bash tool.
    await until(() => (screen.includes("1/3 done") ? true : undefined), 45_000, "the quick task's end on the screen");
    const tree = [{ pid: cadre, comm: "node" }, ...(await treeWithBashTool(cadre))];
    terminal.kill("SIGKILL");
    await terminal;
    expect(await survivors(tree, Date.now() + 15_000)).toEqual([]);
    const summary = await until(async () => (existsSync(join(out, "summary.json")) ? readSummary(out) : undefined), 1_000, "summary.json");
    expect(summary.interrupted).toBe(true);
    expect(summary.exit_code).toBe(129);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["quick", "succeeded"],
      ["busy", "cancelled"],
      ["later", "cancelled"],
    ]);
    expect(await rehearsalHomesLeft(tmp)).toEqual([]);
  });
});
