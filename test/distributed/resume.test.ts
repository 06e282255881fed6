// `cadre run --redis --resume`: an interrupted distributed run goes on where it stopped, on whichever hosts serve it now.
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../src/rehearsal/server.ts";
import { bin, readRunRecord, readSummary, repo } from "../support/cli.ts";
import { runDistributed, startHost, startRedis, swarmFile } from "../support/distributed.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

// Every task's prompt is a shell command: the model runs it with Bash, then reports its output.
const SCRIPT = [{ tool_use: { name: "Bash", input: { command: "{{prompt}}", description: "run it" } } }, { text: "done: {{tool_result}}" }];

const playedFor = (requests: readonly RecordedRequest[], prompt: string) =>
  requests.filter((r) => r.outcome === "played" && JSON.stringify(r.messages[0]?.content ?? "").includes(prompt));

describe("cadre run --redis --resume", () => {
  it("keeps what succeeded; a cancelled task runs again on a host that does not hold its session, so it starts anew", async () => {
    const redis = await startRedis();
    const model = await createRehearsal({ swarm: SCRIPT });
    const first = await startHost(redis, model, { name: "first-host", script: "swarm", concurrency: 2 });
    const file = await swarmFile([
      "name: resumable",
      "concurrency: 2",
      "defaults: { allowed_tools: [Bash] }",
      "tasks:",
      "  - { name: quick, prompt: 'echo QUICK' }",
      "  - { name: slow, prompt: 'sleep 8 && echo SLOW' }",
      "  - { name: last, prompt: 'echo LAST {{results.quick}}', depends_on: [quick, slow] }",
    ]);
    const out = join(await tempHome("cadre-out-"), "run");
    const interrupted = runDistributed(file, redis, out);
    await first.waitFor(/quick succeeded/, 60_000);
    await first.waitFor(/slow starts/, 60_000);
    // Interrupted once its session is known (a host's task may wait a moment before its worker starts): it has one to resume.
    await expect
      .poll(async () => (await readRunRecord(out).catch(() => undefined))?.tasks.find((t) => t.name === "slow")?.session_id, {
        timeout: 60_000,
        message: "the slow task's session in the record",
      })
      .toBeTruthy();
    interrupted.kill("SIGINT");
    expect((await interrupted).exitCode).toBe(130);
    const before = await readSummary(out);
    expect(before.tasks.map((t) => [t.name, t.status, t.host])).toEqual([
      ["quick", "succeeded", "first-host"],
      ["slow", "cancelled", "first-host"],
      ["last", "cancelled", null],
    ]);
    const slowSession = before.tasks[1]!.session_id;
    expect(slowSession).toBeTruthy();

    // The first host is gone; another one, with sessions of its own (its own HOME), serves the resumed run.
    first.process.kill("SIGTERM");
    await first.process;
    await startHost(redis, model, { name: "second-host", script: "swarm", concurrency: 2 });
    const quickRequests = playedFor(model.requests, "echo QUICK").length;
    const resumed = await execa("node", [bin, "run", file, "--redis", redis.url, "--resume", out], { cwd: repo, reject: false });
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    expect(resumed.stdout).toContain("quick: carried over");
    expect(resumed.stdout).toContain(`slow: runs again, its session ${slowSession} is not where it runs now; it starts a new one`);

    const after = await readSummary(out);
    expect(after.tasks.map((t) => [t.name, t.status, t.host, t.carried_over ?? false])).toEqual([
      ["quick", "succeeded", "first-host", true],
      ["slow", "succeeded", "second-host", false],
      ["last", "succeeded", "second-host", false],
    ]);
    expect(after).toMatchObject({ attempt: 2, complete: true, attempt_totals: { tasks_run: 2 } });
    expect(after.tasks[2]!.text).toBe("done: LAST done: QUICK");
    // The finished task asked the model nothing more.
    expect(playedFor(model.requests, "echo QUICK")).toHaveLength(quickRequests);
  }, 180_000);
});
