// A worker whose CLI names a startup failure (startup_failure_reason) ends its task at once, with what to do, and is
// not retried: the same start would fail the same way. On the real CLI, with a TMPDIR it cannot use.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

describe("a startup failure", () => {
  it("fails the task once, with its reason and the fix, and starts no second process", async () => {
    const server = await createRehearsal({ doomed: [{ text: "never" }] });
    const { orchestrator, home } = await rehearsedOrchestrator(server, { retries: 2 });
    const notADirectory = join(home, "a-file");
    await writeFile(notADirectory, "x");
    const started: string[] = [];
    orchestrator.on((event) => {
      if (event.type === "worker_state" && event.state === "starting") started.push(event.task.name);
    });
    const result = await orchestrator.run({ name: "doomed", prompt: "hi", worker: { env: { TMPDIR: notADirectory } } });
    expect(result).toMatchObject({ status: "failed", attempts: 1, error: { code: "STARTUP_FAILED" } });
    expect(result.error?.message).toContain("temp_dir_unusable");
    expect(result.error?.message).toContain("TMPDIR");
    expect(started).toEqual(["doomed"]);
    expect(server.requests).toEqual([]);
  }, 60_000);
});
