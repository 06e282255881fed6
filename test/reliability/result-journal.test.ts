// SIGKILL of `cadre run` right after a task's last reply, while its claude process is still exiting: the journal
// holds the task's result as soon as its transcript does, so --resume keeps it and never asks the model again.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readJournal } from "../../src/run/record/journal.ts";
import { CLAUDE_BIN } from "../support/claude.ts";
import { cadre, readRunRecord } from "../support/cli.ts";
import { until } from "../support/wait.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-result-journal-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a SIGKILL right after a task's last reply", () => {
  it("finds the task's result in the journal, and --resume keeps it without asking the model", { timeout: 120_000 }, async () => {
    // A claude that takes its time to exit once its task is done (SIGTERM ignored): the window the kill lands in.
    const slowExit = join(dir, "slow-exit-claude");
    await writeFile(slowExit, `#!/bin/sh\ntrap '' TERM\n'${CLAUDE_BIN}' "$@"\nsleep 30\n`, { mode: 0o755 });
    const file = join(dir, "swarm.yaml");
    // A fixed concurrency: a process per task, closed as its task ends (auto concurrency keeps it for reuse).
    await writeFile(file, JSON.stringify({ concurrency: 2, tasks: [{ name: "only", prompt: "hi" }], rehearsal: { only: [{ text: "done" }] } }));
    const out = join(dir, "out");
    const run = cadre(["run", file, "--rehearse", "--out", out], { env: { CADRE_CLAUDE_BIN: slowExit } });
    const transcript = join(out, "transcripts", "only.jsonl");
    await until(async () => (await readFile(transcript, "utf8").catch(() => "")).includes('"type":"result"') || undefined, 60_000, "the result");
    run.kill("SIGKILL");
    await run;
    const journal = await readJournal(out);
    expect(journal.values.filter((line) => line.task.name === "only").map((line) => line.task.status)).toContain("succeeded");
    expect((await readRunRecord(out)).tasks[0]).toMatchObject({ name: "only", status: "succeeded", text: "done" });

    // The resume plays an empty script: any request to the model would fail the task.
    await writeFile(
      file,
      JSON.stringify({ tasks: [{ name: "only", prompt: "hi" }], rehearsal: { only: [{ fail: { status: 400, message: "asked again" } }] } }),
    );
    const resumed = await cadre(["run", file, "--rehearse", "--resume", out]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect((await readRunRecord(out)).tasks[0]).toMatchObject({ name: "only", status: "succeeded", text: "done", carried_over: true });
  });
});
