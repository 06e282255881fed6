// A swarm file run from the library (the package entry, src/index.ts), without the command line: runSwarmFile() and SwarmRun, on the real
// claude CLI against the rehearsal server (the run starts it, as `cadre run --rehearse` does).
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { ConfigError, loadSwarmConfigOrThrow, type RunEvent, runSwarmFile, SwarmRun } from "../../src/index.ts";
import { SummarySchema } from "../../src/run/record/schema.ts";
import { it } from "../support/fixtures.ts";

const SWARM = [
  "name: library",
  "concurrency: 2",
  "tasks:",
  "  - { name: first, prompt: say hi }",
  "  - { name: second, prompt: 'build on {{results.first}}', depends_on: [first] }",
  "rehearsal:",
  "  first: [{ text: 'hello from first' }]",
  "  second: [{ text: 'second read: {{prompt}}' }]",
].join("\n");

describe("runSwarmFile", () => {
  it("runs a swarm file to its end, yields its events, and writes the same record as cadre run", async ({ tmp }) => {
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, `${SWARM}\n`);
    const events: RunEvent[] = [];
    const result = await runSwarmFile(file, { outDir: join(tmp, "out"), rehearse: true, onEvent: (event) => events.push(event) });

    expect(result.exitCode).toBe(0);
    expect(result.summary.tasks.map((task) => [task.name, task.status])).toEqual([
      ["first", "succeeded"],
      ["second", "succeeded"],
    ]);
    expect(result.summary.tasks[1]!.text).toContain("hello from first");
    expect(result.summary.complete).toBe(true);
    // The file on disk is the record it resolved with.
    const written = SummarySchema.parse(JSON.parse(await readFile(result.path, "utf8")));
    expect(written).toEqual(result.summary);
    // The orchestrator's events and the swarm's, in order: each task starts before it settles.
    const order = events.filter((e) => e.type === "task_started" || e.type === "task_settled").map((e) => `${e.type}:${e.task.name}`);
    expect(order).toEqual(["task_started:first", "task_settled:first", "task_started:second", "task_settled:second"]);
  });

  it("rejects a config with problems, all of them, before anything starts", async ({ tmp }) => {
    const file = join(tmp, "bad.yaml");
    await writeFile(file, "name: bad\ntasks:\n  - { name: a, prompt: x, agent: nobody }\n  - { name: a, prompt: y }\n");
    const error = await runSwarmFile(file, { outDir: join(tmp, "out") }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.length).toBe(2);
  });

  it("stops on its signal: running tasks end cancelled, the record says interrupted, the exit code is the caller's", async ({ tmp }) => {
    const file = join(tmp, "slow.yaml");
    // The tool says when it runs: the stop must reach a worker inside its tool (one that came earlier, between the
    // model's call and the tool's start, may leave the CLI to finish the turn as a success).
    const started = join(tmp, "tool-started");
    await writeFile(
      file,
      [
        "name: slow",
        // Allowed, so the tool holds the turn: a denied one would let the turn end before the stop reaches it.
        "defaults: { allowed_tools: [Bash] }",
        "tasks:",
        "  - { name: slow, prompt: wait }",
        "  - { name: after, prompt: 'x {{results.slow}}', depends_on: [slow] }",
        "rehearsal:",
        "  slow:",
        `    - tool_use: { name: Bash, input: { command: 'touch ${started} && sleep 30', description: wait } }`,
        "    - text: done",
        "  after: [{ text: never }]",
      ].join("\n"),
    );
    const stop = new AbortController();
    const running = runSwarmFile(file, { outDir: join(tmp, "out"), rehearse: true, signal: stop.signal, stopExitCode: 7 });
    await expect.poll(() => existsSync(started), { timeout: 30_000, message: "the tool under way" }).toBe(true);
    stop.abort();
    const result = await running;
    expect(result.exitCode).toBe(7);
    expect(result.summary.interrupted).toBe(true);
    expect(result.summary.tasks.map((task) => task.status)).toEqual(["cancelled", "cancelled"]);
  });
});

describe("SwarmRun", () => {
  it("leaving its events early stops the run and ends its processes", async ({ tmp }) => {
    const file = join(tmp, "two.yaml");
    await writeFile(file, `${SWARM}\n`);
    const run = await SwarmRun.start(await loadSwarmConfigOrThrow(file), { outDir: join(tmp, "out"), rehearse: true });
    for await (const event of run.events(new AbortController().signal)) {
      if (event.type === "task_started") break;
    }
    const { summary } = run.writeRecord(undefined);
    expect(summary.tasks[0]!.status).toBe("cancelled");
    expect(summary.tasks[1]!.status).not.toBe("succeeded");
  });
});
