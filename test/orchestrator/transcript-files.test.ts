// A task's transcript file is open only while the task runs: a run of thousands of tasks holds its running tasks' files, not every one.
import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decodeTranscript } from "../support/cli.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

/** The files this process holds open now. */
async function openFiles(): Promise<string[]> {
  const fds = await readdir("/proc/self/fd");
  return (await Promise.all(fds.map((fd) => readlink(join("/proc/self/fd", fd)).catch(() => "")))).filter((path) => path !== "");
}

describe("transcript files", () => {
  it("a task's transcript is closed when it ends, whole, while the next task's is written", { timeout: 60_000 }, async () => {
    const server = await createRehearsal({ one: [{ text: "first answer" }], two: [{ text: "second answer" }] });
    const outDir = join(await tempHome("cadre-transcripts-"), "transcripts");
    const { orchestrator } = await rehearsedOrchestrator(server, { outDir, reuse: true });
    const one = await orchestrator.run({ name: "one", prompt: "say one" });
    expect(one.status, one.error?.message).toBe("succeeded");
    const path = orchestrator.transcriptPaths.get(one.id)!;
    await expect.poll(openFiles, { timeout: 10_000 }).not.toContain(path);
    const messages = await decodeTranscript(path);
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "first answer" });

    const two = await orchestrator.run({ name: "two", prompt: "say two" });
    expect(two.status, two.error?.message).toBe("succeeded");
    await expect.poll(async () => (await openFiles()).filter((file) => file.startsWith(outDir)), { timeout: 10_000 }).toEqual([]);
    expect((await decodeTranscript(orchestrator.transcriptPaths.get(two.id)!)).at(-1)).toMatchObject({ result: "second answer" });
    // The first one was not written again.
    expect(await decodeTranscript(path)).toEqual(messages);
  });
});
