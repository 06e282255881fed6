// A rehearsal never reports success that is not there: a spent script or a `fail` step fails its task, and a run
// interrupted in a task's first turn, then resumed, ends as an uninterrupted run does (on real claude workers).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Summary } from "../../src/run/record/schema.ts";
import { cadre, readSummary, swarmFolder } from "../support/cli.ts";
import { until } from "../support/wait.ts";

const folder = swarmFolder("cadre-rehearse-truth-");

const outcome = (summary: Summary) => summary.tasks.map((task) => [task.name, task.status, task.text]);

describe("a rehearsal that cannot answer", () => {
  it("fails the task with the rehearsal's message when the script runs out, or when a step says fail, with text or without", {
    timeout: 120_000,
  }, async () => {
    const config = await folder.config("spent.yaml", [
      "name: spent",
      "tasks:",
      "  - { name: short, prompt: run it }",
      "  - { name: refused, prompt: say nope }",
      "  - { name: outage, prompt: anything }",
      "rehearsal:",
      "  short: [{ tool_use: { name: Bash, input: { command: echo hi } } }]",
      "  refused: [{ text: nope, fail: { status: 400 } }]",
      "  outage: [{ fail: { status: 400, message: scripted outage } }]",
    ]);
    const out = folder.path("spent");
    const run = await cadre(["run", config, "--rehearse", "--out", out]);
    expect(run.exitCode, run.stderr).toBe(1);
    const tasks = new Map((await readSummary(out)).tasks.map((task) => [task.name, task]));
    expect(tasks.get("short")).toMatchObject({
      status: "failed",
      error: { message: expect.stringContaining('rehearsal: script "short" has no step 1 (it has 1 steps, numbered from 0)') },
    });
    expect(tasks.get("refused")).toMatchObject({ status: "failed", error: { message: expect.stringContaining("API status 400") } });
    expect(tasks.get("refused")?.text).not.toBe("nope");
    expect(tasks.get("outage")).toMatchObject({ status: "failed", error: { message: expect.stringContaining("scripted outage") } });
  });
});

describe("a rehearsal interrupted in a task's first turn, then resumed", () => {
  it("ends with the statuses and texts of a run never interrupted", { timeout: 180_000 }, async () => {
    const config = await folder.config("slow.yaml", [
      "name: slow",
      "concurrency: 2",
      "tasks:",
      "  - { name: slow-a, prompt: say a }",
      "  - { name: slow-b, prompt: say b }",
      "  - { name: after, depends_on: [slow-a, slow-b], prompt: 'a said {{results.slow-a}}' }",
      "rehearsal:",
      "  slow-a: [{ text: A done, delay_ms: 20000 }]",
      "  slow-b: [{ text: B done, delay_ms: 20000 }]",
      "  after: [{ text: 'after: {{prompt}}' }]",
    ]);
    const whole = cadre(["run", config, "--rehearse", "--out", folder.path("whole")]);

    const out = folder.path("interrupted");
    const first = cadre(["run", config, "--rehearse", "--out", out]);
    // Each slow task's request has gone out to the scripted model (the CLI says "requesting"), and waits there (20 s).
    const requesting = (name: string) => {
      const file = join(out, "transcripts", `${name}.jsonl`);
      return existsSync(file) && readFileSync(file, "utf8").includes('"status":"requesting"');
    };
    await until(() => (requesting("slow-a") && requesting("slow-b") ? true : undefined), 60_000, "both slow tasks requesting");
    first.kill("SIGINT");
    expect((await first).exitCode).toBe(130);
    expect((await readSummary(out)).tasks.map((task) => task.status)).toEqual(["cancelled", "cancelled", "cancelled"]);

    const resumed = await cadre(["run", config, "--rehearse", "--resume", out]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("has no step");
    const expected = await whole;
    expect(expected.exitCode, expected.stderr).toBe(0);
    expect(outcome(await readSummary(out))).toEqual(outcome(await readSummary(folder.path("whole"))));
    expect(outcome(await readSummary(out))).toEqual([
      ["slow-a", "succeeded", "A done"],
      ["slow-b", "succeeded", "B done"],
      ["after", "succeeded", "after: a said A done"],
    ]);
  });
});
