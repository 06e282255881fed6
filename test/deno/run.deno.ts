// `deno task run <example> --rehearse` against `node bin/cadre.js run` on the same
// example: both succeed and write the same summary.json, up to times and session ids. And a
// workflow script's sandbox on its thread (node:worker_threads on Deno): a computing script stops on SIGTERM.
// Run by `deno task test` (node:test maps onto Deno.test); vitest does not pick it up.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { promisify } from "node:util";
import { DENO, DENO_JSON, ROOT, tempHome } from "./support.ts";

const run = promisify(execFile);
const EXAMPLE = "examples/code-review.yaml";

/**
 * What may differ between two runs of the same swarm: clocks, generated ids, the
 * last bits of the total cost, which is summed in the order the tasks happen to finish,
 * and which task of a prefix group led the cache stagger: the first worker ready writes
 * the shared prompt and the others read it, so a task's cost and its split of cached
 * input into writes and reads (and the saving, priced per task) follow the race.
 */
function comparable(summary: Record<string, unknown>): unknown {
  // run_id is made anew for every run (it names the run's worktree branches).
  const { started_at: _s, finished_at: _f, duration_ms: _d, run_id: _r, tasks, totals, attempt_totals, ...rest } = summary;
  const { cost_usd, cache_saved_usd: _saved, ...sums } = totals as { cost_usd: number; cache_saved_usd: number };
  const attempt = attempt_totals as { cost_usd: number; tasks_run: number };
  return {
    ...rest,
    totals: { ...sums, cost_usd: cost_usd.toFixed(9) },
    attempt_totals: { ...attempt, cost_usd: attempt.cost_usd.toFixed(9) },
    tasks: (tasks as Record<string, unknown>[]).map(
      ({ queued_ms: _q, started_at: _s, finished_at: _f, duration_ms: _t, cost_usd: _c, session_id, usage, ...task }) => {
        assert.equal(typeof session_id, "string");
        const { cache_creation_input_tokens: written, cache_read_input_tokens: read, ...tokens } = usage as Record<string, number>;
        return { ...task, usage: { ...tokens, cached_input_tokens: written! + read! } };
      },
    ),
  };
}

test(`deno task run ${EXAMPLE} --rehearse writes the same summary.json as Node`, async () => {
  const { home, tmp, remove } = await tempHome();
  const env = { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp, NO_COLOR: "1" };
  try {
    // Deno can stand in for `node` in child processes; make sure the reference run is Node's.
    const { stdout: runtime } = await run("node", ["-p", "process.versions.deno ?? 'node'"], { env });
    assert.equal(runtime.trim(), "node");

    const nodeOut = join(home, "node");
    const denoOut = join(home, "deno");
    await run("node", [join(ROOT, "bin/cadre.js"), "run", EXAMPLE, "--rehearse", "--out", nodeOut], { cwd: ROOT, env });
    const denoRun = await run(DENO, ["task", "--config", DENO_JSON, "run", EXAMPLE, "--rehearse", "--out", denoOut], { cwd: ROOT, env });
    assert.match(denoRun.stdout, /4\/4 succeeded/);

    const summaryIn = async (dir: string) => JSON.parse(await readFile(join(dir, "summary.json"), "utf8")) as Record<string, unknown>;
    const nodeSummary = await summaryIn(nodeOut);
    const denoSummary = await summaryIn(denoOut);
    assert.equal(denoSummary.exit_code, 0);
    assert.deepEqual(comparable(denoSummary), comparable(nodeSummary));
    assert.deepEqual(await readdir(join(denoOut, "transcripts")), await readdir(join(nodeOut, "transcripts")));
  } finally {
    await remove();
  }
});

test("deno: SIGTERM stops a workflow script that computes within two seconds, exit 143, with its record", async () => {
  const { home, cwd, tmp, remove } = await tempHome();
  try {
    await writeFile(join(cwd, "spin.js"), 'export const meta = { name: "spin", description: "computes" }\nlog("computing")\nfor (;;) {}\n');
    const out = join(home, "out");
    const env = { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: tmp, NO_COLOR: "1" };
    const child = spawn(DENO, ["run", "-A", "--config", DENO_JSON, join(ROOT, "bin/cadre-deno.ts"), "run", "spin.js", "--out", out], { cwd, env });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (output.includes("· computing")) resolve();
      });
    });
    const sent = performance.now();
    // Not child.kill(): Deno's ChildProcess then reports the exit as by that signal, whatever the code was.
    process.kill(child.pid!, "SIGTERM");
    assert.equal(await exited, 143);
    assert.ok(performance.now() - sent < 2_000, `exited ${Math.round(performance.now() - sent)} ms after SIGTERM`);
    const summary = JSON.parse(await readFile(join(out, "summary.json"), "utf8")) as { complete: boolean; error: { code: string } };
    assert.equal(summary.complete, true);
    assert.equal(summary.error.code, "ABORTED");
  } finally {
    await remove();
  }
});
