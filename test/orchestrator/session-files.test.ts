// A session's file checkpoints and its persistence, on the real CLI.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

describe("session file checkpoints and persistence", () => {
  it("rewindFiles(turn) restores what the session wrote since that turn began", async () => {
    const dir = await tempHome("cadre-rewind-");
    const file = join(dir, "plan.md");
    await writeFile(file, "v0\n");
    const server = await createRehearsal({
      writer: [
        { tool_use: { name: "Write", input: { file_path: file, content: "v1\n" } } },
        { text: "wrote v1" },
        { tool_use: { name: "Write", input: { file_path: file, content: "v2\n" } } },
        { text: "wrote v2" },
      ],
    });
    const { orchestrator } = await rehearsedOrchestrator(server);
    const session = orchestrator.openSession({ name: "writer", cwd: dir, permissionMode: "acceptEdits", worker: { fileCheckpointing: true } });
    await session.send("write v1");
    await session.send("write v2");
    expect(await readFile(file, "utf8")).toBe("v2\n");

    const preview = await session.rewindFiles(2, { dryRun: true });
    expect(preview.filesChanged).toEqual([file]);
    await session.rewindFiles(2);
    expect(await readFile(file, "utf8")).toBe("v1\n");
    await session.rewindFiles(1);
    expect(await readFile(file, "utf8")).toBe("v0\n");
    await expect(session.rewindFiles(3)).rejects.toMatchObject({ code: "REWIND_FAILED", message: expect.stringContaining("2 finished turn") });
  });

  it("a session without persistence whose process died refuses to resume, clearly", async () => {
    const server = await createRehearsal({ chat: [{ text: "one" }, { text: "two" }] });
    const { orchestrator } = await rehearsedOrchestrator(server);
    const session = orchestrator.openSession({ name: "ephemeral", worker: { persistSession: false } });
    await session.send("hello");
    const pid = session.pid!;
    // The worker learns of the death from its process's exit, a moment after the pid is gone: waited for as it happens.
    const ended = new Promise<void>((resolve) => {
      const stop = orchestrator.on((event) => {
        if (event.type !== "worker_state" || (event.state !== "exited" && event.state !== "failed")) return;
        stop();
        resolve();
      });
    });
    process.kill(pid, "SIGKILL");
    expect(await isGone(pid, 10_000)).toBe(true);
    await ended;
    await expect(session.send("still there?")).rejects.toMatchObject({ code: "SESSION_NOT_RESUMABLE" });
  });
});
