// One claude process going wrong under a Worker: missing, dying, killed, hanging, writing
// what it should not. On the real CLI where it can show the fault; otherwise played by
// test/fixtures/fake-claude.mjs.
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { ClaudeNotFoundError, ProtocolError, Worker, WorkerExitedError, type WorkerOptions, WorkingDirectoryError } from "../../src/worker/index.ts";
import { isAlive, isGone } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { MINUTE_OF_BASH, survivors, treeWithBashTool } from "../support/reliability.ts";
import { until } from "../support/wait.ts";
import { startRehearsedWorker } from "../support/worker.ts";

const FAKE_CLAUDE = fileURLToPath(new URL("../fixtures/fake-claude.mjs", import.meta.url));

async function startFake(mode: string, options: WorkerOptions = {}): Promise<Worker> {
  const worker = await Worker.start({ claudePath: FAKE_CLAUDE, env: { FAKE_CLAUDE_MODE: mode }, ...options });
  onTestFinished(async () => {
    await worker.kill();
    expect(isAlive(worker.pid)).toBe(false);
  });
  return worker;
}

describe("one worker process", () => {
  it("names where it looked when the CLI is missing", async () => {
    const error = await Worker.start({ claudePath: "/nonexistent/claude" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaudeNotFoundError);
    expect((error as ClaudeNotFoundError).code).toBe("CLAUDE_NOT_FOUND");
    expect((error as Error).message).toContain("/nonexistent/claude");
  });

  it("rejects a missing working directory before starting anything", async () => {
    const error = await Worker.start({ claudePath: FAKE_CLAUDE, cwd: "/nonexistent/dir" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkingDirectoryError);
    expect((error as Error).message).toContain("/nonexistent/dir");
  });

  it("reports exit code and stderr tail when the CLI exits before initialize", async () => {
    const error = await startFake("exit-before-init").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerExitedError);
    const exited = error as WorkerExitedError;
    expect(exited.code).toBe("WORKER_EXITED");
    expect(exited.exitCode).toBe(3);
    expect(exited.stderrTail).toContain("the config file is broken");
    expect(exited.message).toContain("exited with code 3");
  });

  it("rejects the turn and every pending request at once when the CLI dies mid-turn", async () => {
    let permissionSignal: AbortSignal | undefined;
    const worker = await startFake("die-with-permission", {
      // A handler that would wait forever: the death must release it.
      canUseTool: ({ signal }) => {
        permissionSignal = signal;
        return new Promise(() => {});
      },
    });
    const states: string[] = [];
    worker.on((e) => e.type === "state" && states.push(e.state));
    const turn = worker.send("go");
    const error = await turn.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerExitedError);
    expect((error as WorkerExitedError).exitCode).toBe(7);
    expect((error as WorkerExitedError).stderrTail).toContain("lost the connection");
    expect(permissionSignal?.aborted).toBe(true);
    await expect(worker.interrupt()).rejects.toBeInstanceOf(WorkerExitedError);
    await expect(worker.run("again")).rejects.toBeInstanceOf(WorkerExitedError);
    expect(states).toContain("awaiting_permission");
    expect(worker.state).toBe("failed");
    expect(isAlive(worker.pid)).toBe(false);
  });

  it("kill mid-stream (real CLI): the turn fails at once with WORKER_EXITED and the signal", async () => {
    const server = await createRehearsal({ stream: [{ text: "one two three four five six seven eight nine ten", chunk_delay_ms: 1_000 }] });
    const { worker } = await startRehearsedWorker(server, "stream", { includePartialMessages: true });
    let deltas = 0;
    worker.on((e) => {
      if (e.type === "message" && e.message.type === "stream_event" && JSON.stringify(e.message).includes("text_delta")) deltas++;
    });
    const turn = worker.send("go");
    await until(() => (deltas > 0 ? true : undefined), 30_000, "the first text delta");
    process.kill(worker.pid!, "SIGKILL");
    const error = await turn.result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerExitedError);
    expect((error as WorkerExitedError).signal).toBe("SIGKILL");
    expect(deltas).toBeLessThan(10);
    expect(worker.state).toBe("failed");
  });

  it("kill() ends the CLI's tools too, though the CLI starts them in their own session (real CLI)", async () => {
    const server = await createRehearsal({ busy: [{ tool_use: MINUTE_OF_BASH }, { text: "done" }] });
    const { worker } = await startRehearsedWorker(server, "busy", { allowedTools: ["Bash"] });
    const turn = worker.send("go");
    turn.result.catch(() => {});
    const tree = [{ pid: worker.pid!, comm: "claude" }, ...(await treeWithBashTool(worker.pid!))];
    await worker.kill();
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
  });

  it("ends the worker with a typed error on a line over the limit", async () => {
    const worker = await startFake("long-line", {
      maxLineBytes: 64 * 1024,
      env: { FAKE_CLAUDE_MODE: "long-line", FAKE_CLAUDE_LINE_BYTES: String(1024 * 1024) },
    });
    const error = await worker.run("go").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toMatch(/line/i);
    await worker.exited;
    expect(worker.state).toBe("failed");
  });

  it("reports a non-JSON line and goes on", async () => {
    const worker = await startFake("garbage");
    const malformed: string[] = [];
    worker.on((e) => e.type === "malformed_line" && malformed.push(e.line));
    const result = await worker.run("go");
    expect(result.text).toBe("ok");
    expect(malformed).toEqual(["this is not json"]);
  });

  it("kills a CLI that ignores stdin closing and SIGTERM", async () => {
    const worker = await startFake("hang", { closeGraceMs: 200 });
    const details = await worker.close();
    expect(details.signal).toBe("SIGKILL");
    expect(isAlive(worker.pid)).toBe(false);
  });

  it("kill() gives the CLI no last word: it is stopped at once, and stdin stays open until it is dead", async () => {
    // A CLI that ends its turn when stdin closes would otherwise answer a turn that kill() was meant to end.
    const worker = await startFake("result-on-eof");
    const turn = worker.send("go");
    await worker.kill();
    await expect(turn.result).rejects.toThrow();
  });

  it("kill() does not wait for a close() already in its grace period", async () => {
    const worker = await startFake("hang", { closeGraceMs: 60_000 });
    const closing = worker.close();
    const killed = worker.kill();
    expect(await isGone(worker.pid!)).toBe(true);
    expect((await killed).signal).toBe("SIGKILL");
    expect(await closing).toEqual(await killed);
  });
});
