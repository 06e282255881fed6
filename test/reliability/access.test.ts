// Nobody logged in, or an API that cannot be reached: on the real CLI (no rehearsal), cadre run
// finds out from its first worker and does not start the other tasks into the same failure.
import { once } from "node:events";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingClaude } from "../support/claude.ts";
import { bin, readSummary, repo } from "../support/cli.ts";
import { isGone } from "../support/processes.ts";
import { until } from "../support/wait.ts";

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-access-"));
  file = join(dir, "three.yaml");
  await writeFile(file, JSON.stringify({ tasks: ["a", "b", "c"].map((name) => ({ name, prompt: "hi" })) }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `cadre run` live, with a HOME of its own (no login there) and only the environment given. */
async function startLive(name: string, env: Record<string, string>) {
  const home = join(dir, `${name}-home`);
  await mkdir(home);
  const out = join(dir, `${name}-out`);
  const child = execa("node", [bin, "run", file, "--out", out], {
    cwd: repo,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? "", HOME: home, ...env },
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  return { child, out, output: () => output };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

describe("a run that cannot reach the model", () => {
  it("without a login or ANTHROPIC_API_KEY: one line that says how to log in, exit 2, no second task started", async () => {
    const claude = await recordingClaude(await mkdtemp(join(dir, "claude-")));
    const run = await startLive("no-login", { CADRE_CLAUDE_BIN: claude.bin });
    const { exitCode } = await run.child;
    const output = run.output();
    // The claude processes the run started: the first task's, and while it probes, one ahead per other core at most.
    const started = await claude.pids();
    expect(started.length).toBeGreaterThanOrEqual(1);
    expect(started.length).toBeLessThanOrEqual(availableParallelism());
    for (const pid of started) expect(await isGone(pid), `claude ${pid} outlived the run`).toBe(true);
    expect(exitCode, output).toBe(2);
    const stop = output.split("\n").filter((line) => line.includes("no task can run"));
    expect(stop, output).toHaveLength(1);
    expect(stop[0]).toMatch(/not logged in.*claude auth login.*ANTHROPIC_API_KEY.*--rehearse` runs offline/);
    // One worker ran: one transcript, one "started" (on a loaded machine too: the others wait past the CLI's own answer).
    expect(await readdir(join(run.out, "transcripts"))).toHaveLength(1);
    expect(output.match(/: started/g), output).toHaveLength(1);
    const summary = await readSummary(run.out);
    expect([summary.exit_code, summary.totals.succeeded]).toEqual([2, 0]);
    // The task that found out failed of it, in the words that say what to do; the others were stopped before they started.
    const startedTasks = summary.tasks.filter((task) => task.started_at !== null);
    expect(startedTasks.map((task) => [task.status, task.error?.code])).toEqual([["failed", "NOT_LOGGED_IN"]]);
    expect(startedTasks[0]!.error?.message).toMatch(/claude auth login/);
    expect(new Set(summary.tasks.filter((task) => task.started_at === null).map((task) => task.status))).toEqual(new Set(["cancelled"]));
  });

  it("with an API that cannot be reached: after the first worker finds so, says it and starts no other task", async () => {
    const port = await closedPort();
    const run = await startLive("unreachable", { ANTHROPIC_API_KEY: "sk-ant-test-not-a-key", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` });
    await until(
      () => (/the API cannot be reached \(API \w+: retry 1\/\d+\); no other task starts/.test(run.output()) ? true : undefined),
      45_000,
      "the line",
    );
    // The first worker's CLI goes on retrying (about 190 s in all); the others stay unstarted meanwhile.
    await until(() => (/retry 3\/\d+/.test(run.output()) ? true : undefined), 45_000, "two more retries");
    expect(startedLines(run)).toHaveLength(1);
    expect(await readdir(join(run.out, "transcripts"))).toHaveLength(1);
    run.child.kill("SIGINT");
    const { exitCode } = await run.child;
    expect(exitCode, run.output()).toBe(130);
    expect(run.output().match(/the API cannot be reached/g)).toHaveLength(1);
    const summary = await readSummary(run.out);
    expect(summary.tasks.filter((task) => task.started_at !== null).map((task) => task.name)).toHaveLength(1);
  });
});

/** The "started" lines so far. */
function startedLines(run: { output: () => string }): string[] {
  return run.output().match(/\w: started/g) ?? [];
}
