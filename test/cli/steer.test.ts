// `cadre send | stop | interrupt` from another process reach one task of a running `cadre run` through its owner-only
// socket, on the real claude CLI against the rehearsal server; and say in one line when the run has ended.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, statSync } from "node:fs";
import { mkdir, readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { ControlSocket } from "../../src/run/index.ts";
import { cadre, readSummary } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { bothAgentsBusy, oneSlotSwarm, releaseSlot, releaseSteerMe, slotTaken, steeringSwarm } from "../support/steering.ts";
import { until } from "../support/wait.ts";

/** Binds a Unix socket at `path` in a child process and SIGKILLs it: the socket's file stays, and nothing listens at it. */
async function leaveStaleSocket(path: string): Promise<void> {
  const listen = `require("node:net").createServer().listen(${JSON.stringify(path)}, () => console.log("listening"))`;
  const child = spawn(process.execPath, ["-e", listen], { stdio: ["ignore", "pipe", "inherit"] });
  await once(child.stdout, "data");
  child.kill("SIGKILL");
  await once(child, "exit");
}

/** A run the control socket reaches, with one task `busy`: the tasks it was sent a message to are `reached`. */
function busyRun() {
  const reached: string[] = [];
  const run = {
    runningTasks: ["busy"],
    send: async (task: string) => {
      reached.push(task);
    },
    stopTask: async () => {},
    interrupt: async () => {},
  };
  return { run, reached };
}

describe("cadre send, stop and interrupt", () => {
  it("reach the tasks of a running cadre run through its socket, and fail in one line once it has ended", { timeout: 120_000 }, async ({ tmp }) => {
    await writeFile(join(tmp, "swarm.yaml"), steeringSwarm(tmp, { dependent: true }));
    const running = cadre(["run", "swarm.yaml", "--rehearse"], { cwd: tmp, timeout: 90_000 });
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
    const runsDir = join(tmp, ".cadre", "runs");
    const runDir = join(runsDir, (await readdir(runsDir))[0]!);
    // Only the run's owner can reach the socket: the socket 0600, in a folder 0700.
    expect(statSync(join(runDir, "control")).mode & 0o777).toBe(0o700);
    expect(statSync(join(runDir, "control", "run.sock")).mode & 0o777).toBe(0o600);

    const notRunning = await cadre(["interrupt", "latest", "after-stop"], { cwd: tmp });
    expect(notRunning.exitCode).toBe(2);
    expect(notRunning.stderr).toMatch(/^cadre interrupt: task "after-stop" is not running \(running: [^\n]*\)$/);

    const sent = await cadre(["send", "latest", "steer-me", "look", "at", "B", "instead"], { cwd: tmp });
    expect([sent.exitCode, sent.stdout, sent.stderr]).toEqual([0, "cadre send: sent to steer-me", ""]);
    await releaseSteerMe(tmp);
    const stopped = await cadre(["stop", runDir, "stop-me"], { cwd: tmp });
    expect([stopped.exitCode, stopped.stdout, stopped.stderr]).toEqual([0, "cadre stop: stopped stop-me", ""]);

    const run = await running;
    expect(run.exitCode).toBe(1);
    const summary = await readSummary(runDir);
    const byName = new Map(summary.tasks.map((task) => [task.name, task]));
    expect(byName.get("steer-me")).toMatchObject({ status: "succeeded", text: "turned to: look at B instead" });
    expect(byName.get("stop-me")).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by cadre stop" } });
    expect(byName.get("after-stop")?.status).toBe("skipped");
    expect(summary.steering?.map((entry) => [entry.task, entry.action, entry.from, entry.text])).toEqual([
      ["steer-me", "send", "cadre send", "look at B instead"],
      ["stop-me", "stop", "cadre stop", undefined],
    ]);
    // The run has ended: its socket and its folder are gone, and a message says so in one line.
    expect(existsSync(join(runDir, "control"))).toBe(false);
    const late = await cadre(["send", runDir, "steer-me", "too late"], { cwd: tmp });
    expect([late.exitCode, late.stderr]).toEqual([
      2,
      `cadre send: cannot reach the run in ${runDir}: the run has ended (nothing listens at its control socket)`,
    ]);
    const bare = await cadre(["send", runDir, "steer-me"], { cwd: tmp });
    expect([bare.exitCode, bare.stderr]).toEqual([2, "cadre send: usage: cadre send <run-dir | latest> <task> <message>"]);
  });

  it("stop a task that waits for a slot: it ends without reaching the model, its dependent skipped; --resume runs both", {
    timeout: 150_000,
  }, async ({ tmp }) => {
    await writeFile(join(tmp, "swarm.yaml"), oneSlotSwarm(tmp, { dependent: true }));
    const running = cadre(["run", "swarm.yaml", "--rehearse"], { cwd: tmp, timeout: 90_000 });
    const { waiting, working } = await until(() => slotTaken(tmp), 60_000, "a task in the slot");
    const runsDir = join(tmp, ".cadre", "runs");
    const runDir = join(runsDir, (await readdir(runsDir))[0]!);

    const message = await cadre(["send", "latest", waiting, "hello"], { cwd: tmp });
    expect(message.exitCode).toBe(2);
    expect(message.stderr).toMatch(new RegExp(`^cadre send: task "${waiting}" waits for a slot: .*\\(a stop ends it\\)$`));
    const stopped = await cadre(["stop", "latest", waiting], { cwd: tmp });
    expect([stopped.exitCode, stopped.stdout, stopped.stderr]).toEqual([0, `cadre stop: stopped ${waiting}`, ""]);
    await releaseSlot(tmp);

    const run = await running;
    expect(run.exitCode).toBe(1);
    const summary = await readSummary(runDir);
    const byName = new Map(summary.tasks.map((task) => [task.name, task]));
    expect(byName.get(working)).toMatchObject({ status: "succeeded", text: `${working} done` });
    expect(byName.get(waiting)).toMatchObject({ status: "cancelled", error: { code: "STOPPED", message: "stopped by cadre stop" } });
    expect(byName.get("after")?.status).toBe("skipped");
    expect(byName.get("after")?.error?.message).toContain(waiting);
    expect(summary.steering?.map((entry) => [entry.task, entry.action, entry.from])).toEqual([[waiting, "stop", "cadre stop"]]);
    // It never reached the model: the run's replies hold the working task's only.
    const owners = (await readFile(join(runDir, "replies.jsonl"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { name?: string }).name);
    expect(owners).toContain(working);
    expect(owners).not.toContain(waiting);

    const again = await cadre(["run", "swarm.yaml", "--rehearse", "--resume", runDir], { cwd: tmp, timeout: 90_000 });
    expect(again.exitCode, again.stderr).toBe(0);
    const resumed = await readSummary(runDir);
    expect(resumed.tasks.map((task) => [task.name, task.status])).toEqual([
      ["a", "succeeded"],
      ["b", "succeeded"],
      ["after", "succeeded"],
    ]);
  });

  it("leave no socket behind when a second signal kills the run", { timeout: 120_000 }, async ({ tmp }) => {
    await writeFile(join(tmp, "swarm.yaml"), steeringSwarm(tmp, { dependent: false }));
    const running = cadre(["run", "swarm.yaml", "--rehearse"], { cwd: tmp, timeout: 90_000 });
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
    const runsDir = join(tmp, ".cadre", "runs");
    const runDir = join(runsDir, (await readdir(runsDir))[0]!);
    expect(existsSync(join(runDir, "control", "run.sock"))).toBe(true);
    // Two signals sent at once may reach the process as one: the second goes once the first has begun the graceful stop.
    let out = "";
    const stopping = new Promise<void>((resolve) =>
      running.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        if (out.includes("interrupted: stopping the workers")) resolve();
      }),
    );
    running.kill("SIGINT");
    await stopping;
    running.kill("SIGINT");
    const run = await running;
    expect([run.exitCode, run.stderr]).toEqual([130, expect.stringContaining("cadre run: killed;")]);
    expect(existsSync(join(runDir, "control"))).toBe(false);
  });

  it("take latest as the run started last that listens: a resumed older run, not a newer run that ended", async ({ tmp }) => {
    const runsDir = join(tmp, ".cadre", "runs");
    const resumed = join(runsDir, "2026-11-29T05-00-00Z");
    await mkdir(join(runsDir, "2026-11-29T06-00-00Z"), { recursive: true });
    await mkdir(resumed, { recursive: true });
    const { run, reached } = busyRun();
    const socket = await ControlSocket.open(resumed, run);
    try {
      const sent = await cadre(["send", "latest", "busy", "hello"], { cwd: tmp });
      expect([sent.exitCode, sent.stdout, sent.stderr]).toEqual([0, "cadre send: sent to busy", ""]);
      expect(reached).toEqual(["busy"]);
      // A message of whitespace alone says nothing: refused before the run is asked.
      const blank = await cadre(["send", "latest", "busy", " \n\t"], { cwd: tmp });
      expect([blank.exitCode, blank.stderr]).toEqual([2, "cadre send: the message is empty (only whitespace): type what to send"]);
      expect(reached).toEqual(["busy"]);
    } finally {
      await socket.close();
    }
  });

  it("take latest past a newer run's socket that no longer answers (its run was SIGKILLed), saying which run it reached", async ({ tmp }) => {
    const runsDir = join(tmp, ".cadre", "runs");
    const alive = join(runsDir, "2026-11-29T05-00-00Z");
    const killed = join(runsDir, "2026-11-29T06-00-00Z");
    await mkdir(alive, { recursive: true });
    const { run, reached } = busyRun();
    const socket = await ControlSocket.open(alive, run);
    try {
      // The newer run's socket made last, by a process then SIGKILLed: its file stays, and nothing listens at it.
      await mkdir(join(killed, "control"), { recursive: true, mode: 0o700 });
      const staleSocket = join(killed, "control", "run.sock");
      await leaveStaleSocket(staleSocket);
      const later = new Date(Date.now() + 60_000);
      await utimes(staleSocket, later, later);
      expect(existsSync(staleSocket)).toBe(true);

      const sent = await cadre(["send", "latest", "busy", "hello"], { cwd: tmp });
      expect([sent.exitCode, sent.stdout, sent.stderr]).toEqual([
        0,
        "cadre send: sent to busy",
        `cadre send: latest is ${alive}: the newer ${killed} does not answer (its run was killed)`,
      ]);
      expect(reached).toEqual(["busy"]);
    } finally {
      await socket.close();
    }
    // No run answers: latest is the newest, and the message says its run has ended.
    const none = await cadre(["stop", "latest", "busy"], { cwd: tmp });
    expect([none.exitCode, none.stderr]).toEqual([
      2,
      `cadre stop: cannot reach the run in ${killed}: the run has ended (nothing listens at its control socket)`,
    ]);
  });

  it("keep a second cadre run --resume of a run still going from taking over its directory and socket", { timeout: 120_000 }, async ({ tmp }) => {
    await writeFile(join(tmp, "swarm.yaml"), steeringSwarm(tmp, { dependent: false }));
    const running = cadre(["run", "swarm.yaml", "--rehearse"], { cwd: tmp, timeout: 90_000 });
    await expect.poll(() => bothAgentsBusy(tmp), { timeout: 60_000 }).toBe(true);
    const runsDir = join(tmp, ".cadre", "runs");
    const runDir = join(runsDir, (await readdir(runsDir))[0]!);
    const second = await cadre(["run", "swarm.yaml", "--rehearse", "--resume"], { cwd: tmp, timeout: 60_000 });
    expect([second.exitCode, second.stderr]).toEqual([
      2,
      `cadre run: cannot resume ${runDir}: its run is still going (its control socket answers); stop it first`,
    ]);
    // The first run still answers at its socket.
    const stopped = await cadre(["stop", "latest", "stop-me"], { cwd: tmp });
    expect([stopped.exitCode, stopped.stdout]).toEqual([0, "cadre stop: stopped stop-me"]);
    running.kill("SIGINT");
    await running;
  });
});
