// Session options of the CLI that cadre passes through (checkpoints, resume points,
// chosen ids, persistence, plugins, betas, fallback model), each shown on the real CLI.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { RewindFilesError, Worker, WorkerOptionsError } from "../../src/worker/index.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { conversationText, requestsOf } from "../support/requests.ts";
import { startRehearsedWorker } from "../support/worker.ts";

/** The session files the CLI wrote under this HOME (one JSONL per session). */
async function sessionFiles(home: string): Promise<string[]> {
  const root = join(home, ".claude", "projects");
  const entries = await readdir(root, { recursive: true }).catch(() => [] as string[]);
  return entries.filter((entry) => entry.endsWith(".jsonl"));
}

describe("file checkpoints", () => {
  it("rewindFiles restores a file the model wrote, after a dry run that reports it", async () => {
    const server = await createRehearsal();
    const { worker, cwd } = await startRehearsedWorker(server, "edit", { fileCheckpointing: true, permissionMode: "acceptEdits" });
    const file = join(cwd, "notes.txt");
    await writeFile(file, "original\n");
    server.setScript("edit", [
      { tool_use: { name: "Write", input: { file_path: file, content: "written by the model\n" } } },
      { text: "done" },
      { text: "more" },
    ]);

    const first = await worker.run("change the notes");
    // With checkpoints every prompt goes out under an id of cadre's.
    const at = first.userMessageId!;
    expect(at).toMatch(/^[0-9a-f-]{36}$/);
    expect(await readFile(file, "utf8")).toBe("written by the model\n");
    await worker.run("anything else?");

    const preview = await worker.rewindFiles(at, { dryRun: true });
    expect(preview).toMatchObject({ canRewind: true, filesChanged: [file] });
    expect(await readFile(file, "utf8")).toBe("written by the model\n");

    await worker.rewindFiles(at);
    expect(await readFile(file, "utf8")).toBe("original\n");
  });

  it("refuses clearly without checkpointing, and for a message with no checkpoint", async () => {
    const server = await createRehearsal({ hi: [{ text: "hello" }, { text: "again" }] });
    const plain = await startRehearsedWorker(server, "hi");
    const turn = await plain.worker.run("hi");
    expect(turn.userMessageId).toBeUndefined();
    const off = await plain.worker.rewindFiles("00000000-0000-4000-8000-000000000000").catch((error: unknown) => error);
    expect(off).toBeInstanceOf(RewindFilesError);
    expect(off).toMatchObject({ code: "REWIND_FAILED", message: expect.stringContaining("fileCheckpointing: true") });

    const checkpointed = await startRehearsedWorker(server, "hi", { fileCheckpointing: true });
    await checkpointed.worker.run("hi");
    const unknown = await checkpointed.worker.rewindFiles("00000000-0000-4000-8000-000000000000").catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: "REWIND_FAILED", message: expect.stringContaining("No file checkpoint") });
  });
});

describe("session identity and persistence", () => {
  it("resumeSessionAt continues from an earlier turn, without what came after it", async () => {
    const server = await createRehearsal({ memo: [{ text: "noted one" }, { text: "noted two" }, { text: "you said {{prompt}}" }] });
    const first = await startRehearsedWorker(server, "memo");
    const one = await first.worker.run("the first word is ALPHA");
    await first.worker.run("the second word is BRAVO");
    await first.worker.close();
    expect(one.lastMessageId).toMatch(/[0-9a-f-]{36}/);

    const resumed = await Worker.start({
      cwd: first.cwd,
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("memo"), home: first.home }),
      resume: one.sessionId,
      resumeSessionAt: one.lastMessageId,
      forkSession: true,
    });
    onTestFinished(async () => {
      await resumed.close();
    });
    await resumed.run("which words?");
    const last = conversationText(requestsOf(server.requests, "memo").at(-1));
    expect(last).toContain("ALPHA");
    expect(last).not.toContain("BRAVO");
  });

  it("sessionId names the session; persistSession: false leaves no session file", async () => {
    const server = await createRehearsal({ hi: [{ text: "hello" }] });
    const id = "0b5e7d0c-1a2b-4c3d-8e9f-0123456789ab";
    const named = await startRehearsedWorker(server, "hi", { sessionId: id });
    expect((await named.worker.run("hi")).sessionId).toBe(id);
    await named.worker.close();
    expect((await sessionFiles(named.home)).some((file) => file.endsWith(`${id}.jsonl`))).toBe(true);

    const ephemeral = await startRehearsedWorker(server, "hi", { persistSession: false });
    await ephemeral.worker.run("hi");
    await ephemeral.worker.close();
    expect(await sessionFiles(ephemeral.home)).toEqual([]);
  });

  it("refuses options that contradict each other before starting a process", async () => {
    await expect(Worker.start({ resumeSessionAt: "x" })).rejects.toThrow(WorkerOptionsError);
    await expect(Worker.start({ forkSession: true })).rejects.toMatchObject({ code: "INVALID_WORKER_OPTIONS" });
    await expect(Worker.start({ sessionId: "not-a-uuid" })).rejects.toThrow(/must be a UUID/);
    // A session id read back from a record or a tool call never reaches the CLI as a flag.
    for (const hostile of ["--version", "--dangerously-skip-permissions", "a b"]) {
      await expect(Worker.start({ resume: hostile })).rejects.toThrow(`resume must be a session id (a UUID), got ${JSON.stringify(hostile)}`);
    }
    await expect(Worker.start({ sessionId: "0b5e7d0c-1a2b-4c3d-8e9f-0123456789ab", resume: "0b5e7d0c-1a2b-4c3d-8e9f-0123456789ac" })).rejects.toThrow(
      /needs forkSession/,
    );
  });
});

describe("plugins, betas and the fallback model", () => {
  it("loads a plugin directory, sends the betas, and falls back when the main model is overloaded", async () => {
    const server = await createRehearsal({ busy: [{ text: "answered", fail: { status: 529, times: 4 } }] });
    const plugin = join(await tempHome("cadre-plugin-"), "cadre-probe");
    await mkdir(join(plugin, ".claude-plugin"), { recursive: true });
    await mkdir(join(plugin, "commands"), { recursive: true });
    await writeFile(
      join(plugin, ".claude-plugin", "plugin.json"),
      JSON.stringify({ name: "cadre-probe", version: "1.0.0", description: "test plugin" }),
    );
    await writeFile(join(plugin, "commands", "probe.md"), "---\ndescription: probe\n---\nSay PROBE.\n");

    const { worker } = await startRehearsedWorker(server, "busy", {
      model: "claude-main-model",
      fallbackModel: "claude-fallback-model",
      betas: ["context-1m-2025-08-07"],
      pluginDirs: [plugin],
    });
    const result = await worker.run("hi");
    // system/init comes with the first turn.
    expect(JSON.stringify(worker.session?.plugins)).toContain("cadre-probe");
    expect(result.text).toBe("answered");
    const requests = server.requests.filter((request) => request.script === "busy" && request.step === 0);
    expect(requests[0]?.model).toBe("claude-main-model");
    expect(requests.at(-1)?.model).toBe("claude-fallback-model");
    expect(requests[0]?.betas).toContain("context-1m-2025-08-07");
  });
});
