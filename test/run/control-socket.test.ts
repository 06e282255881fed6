// A run's control socket in memory: what it passes to the run (data only, checked at the edge), what it refuses, and its permissions.
import { statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { TaskNotRunningError } from "../../src/orchestrator/index.ts";
import { askRun, ControlSocket, ControlSocketError, RunNotReachableError, type SteerableRun } from "../../src/run/index.ts";
import { it } from "../support/fixtures.ts";

/** A run that keeps what reached it; task "busy" runs, no other. */
function fakeRun(): SteerableRun & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  const reach = (call: unknown[]) => {
    if (call[1] !== "busy") throw new TaskNotRunningError(String(call[1]), ["busy"]);
    calls.push(call);
  };
  return {
    calls,
    runningTasks: ["busy"],
    send: async (task, text, origin) => reach(["send", task, text, origin?.from]),
    stopTask: async (task, origin) => reach(["stop", task, origin?.from]),
    interrupt: async (task, origin) => reach(["interrupt", task, origin?.from]),
  } as SteerableRun & { calls: unknown[][] };
}

/** Writes one raw line to the socket and reads its answer. */
function raw(path: string, line: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let received = "";
    socket.on("connect", () => socket.write(line));
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("end", () => resolve(JSON.parse(received)));
    socket.on("error", reject);
  });
}

describe("a run's control socket", () => {
  it("passes each request to the run as data, answers in one line, and is its owner's alone", async ({ tmp }) => {
    const run = fakeRun();
    const socket = await ControlSocket.open(tmp, run);
    try {
      expect(statSync(join(tmp, "control")).mode & 0o777).toBe(0o700);
      expect(statSync(socket.path).mode & 0o777).toBe(0o600);
      // Text that looks like a command, a path or a flag reaches the run as it was written.
      const text = "$(rm -rf ~) @/etc/passwd --dangerously-skip-permissions";
      expect(await askRun(tmp, { action: "send", task: "busy", text })).toEqual({ ok: true, running: ["busy"] });
      expect(await askRun(tmp, { action: "interrupt", task: "busy" })).toEqual({ ok: true, running: ["busy"] });
      expect(await askRun(tmp, { action: "stop", task: "idle" })).toEqual({
        ok: false,
        code: "TASK_NOT_RUNNING",
        message: 'task "idle" is not running (running: busy)',
      });
      expect(run.calls).toEqual([
        ["send", "busy", text, "cadre send"],
        ["interrupt", "busy", "cadre interrupt"],
      ]);
      // Anything else is refused before the run sees it.
      for (const line of ["not json\n", '{"action":"run","task":"busy"}\n', '{"action":"stop","task":"busy","flags":"-x"}\n'])
        expect(await raw(socket.path, line)).toMatchObject({ ok: false, code: "BAD_REQUEST" });
      expect(await raw(socket.path, "x".repeat(300 * 1024))).toMatchObject({ ok: false, code: "REQUEST_TOO_LARGE" });
      expect(run.calls).toHaveLength(2);
    } finally {
      await socket.close();
    }
    await expect(askRun(tmp, { action: "stop", task: "busy" })).rejects.toThrow(RunNotReachableError);
  });

  it("passes a message verbatim, its spaces and newlines included, and refuses one of whitespace alone, saying so", async ({ tmp }) => {
    const run = fakeRun();
    const socket = await ControlSocket.open(tmp, run);
    try {
      const text = "  indented\n\tand a tab\n";
      expect(await askRun(tmp, { action: "send", task: "busy", text })).toEqual({ ok: true, running: ["busy"] });
      for (const empty of ["", " \n\t "])
        expect(await askRun(tmp, { action: "send", task: "busy", text: empty })).toEqual({
          ok: false,
          code: "BAD_REQUEST",
          message: "the message is empty (only whitespace): type what to send",
        });
      expect(run.calls).toEqual([["send", "busy", text, "cadre send"]]);
    } finally {
      await socket.close();
    }
  });

  it("tells a request in flight that the run ended before it answered", async ({ tmp }) => {
    const run = fakeRun();
    let reached = () => {};
    const interrupting = new Promise<void>((resolve) => (reached = resolve));
    // An interrupt the CLI has not answered yet when the run ends.
    run.interrupt = () => {
      reached();
      return new Promise<void>(() => {});
    };
    const socket = await ControlSocket.open(tmp, run);
    const asked = askRun(tmp, { action: "interrupt", task: "busy" });
    await interrupting;
    await socket.close();
    await expect(asked).rejects.toThrow(`cannot reach the run in ${tmp}: the run ended before it answered`);
  });

  it("says when the run directory given is no directory, rather than that its run has ended", async ({ tmp }) => {
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, "name: x\n");
    const ask = (dir: string) => askRun(dir, { action: "stop", task: "busy" }).catch((error: Error) => error.message);
    expect(await ask(join(tmp, "nope"))).toBe(`cannot reach the run in ${join(tmp, "nope")}: there is no such directory`);
    expect(await ask(join(file, "run"))).toBe(`cannot reach the run in ${join(file, "run")}: there is no such directory`);
    expect(await ask(file)).toBe(`cannot reach the run in ${file}: it is not a directory (give the run's directory, or latest)`);
    expect(await ask(tmp)).toBe(`cannot reach the run in ${tmp}: the run has ended (nothing listens at its control socket)`);
  });

  it("is refused, with why, for a run directory too deep for a socket's path", async ({ tmp }) => {
    const deep = join(tmp, "d".repeat(120));
    await expect(ControlSocket.open(deep, fakeRun())).rejects.toThrow(ControlSocketError);
  });
});
