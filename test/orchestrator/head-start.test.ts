// Processes started ahead, on the real CLI: while the first task checks the way to the model (the access check), a
// process for the tasks waiting behind it starts on a core the check leaves idle; while a planner runs, one for the
// fan-out that waits on it. No task's yet, such a process asks the model nothing, and the next task of its settings
// takes it. At most one per idle core and within the concurrency.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import type { MachineProbe, OrchestratorEvent, WorkerContext } from "../../src/orchestrator/index.ts";
import { orchestratorOptionsFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm, type SwarmEvent } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { liveClaudeChildren, sampleClaudeChildren } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { settledOf } from "../support/swarm.ts";
import { until } from "../support/wait.ts";

type Started = Extract<OrchestratorEvent, { type: "task_started" }>;

const machine = (cores: number): MachineProbe => ({ cores: () => cores, freeMemoryBytes: () => 16 * 2 ** 30 });

/** The pids of the test's claude children, once there are two or more. */
const twoLive = (what: string) =>
  until(
    async () => {
      const live = await liveClaudeChildren();
      return live.length >= 2 ? live : undefined;
    },
    30_000,
    what,
  );

describe("a process started ahead during the access check", () => {
  it("starts beside the first task's, asks the model nothing, and serves the next task", async () => {
    // The first reply takes a while: the check is still open when the second process is up.
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}", delay_ms: 2_000 }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 4, machine: machine(2), script: () => "s" });
    const started: Started[] = [];
    orchestrator.on((event) => event.type === "task_started" && started.push(event));

    const runs = ["one", "two", "three"].map((name) => orchestrator.run({ name, prompt: name }));
    const early = await twoLive("a second process while the first task probes");

    const results = await Promise.all(runs);
    // One request per task: the process started ahead asked the model nothing of its own.
    expect(server.requests.map((request) => request.outcome)).toEqual(["played", "played", "played"]);
    expect(results.map((r) => [r.status, r.text])).toEqual([
      ["succeeded", "done one"],
      ["succeeded", "done two"],
      ["succeeded", "done three"],
    ]);
    const byName = new Map(started.map((event) => [event.task.name, event]));
    expect(byName.get("one")?.worker).toBe("cold");
    // One task took the process started ahead, one of the two seen while the first probed: two cores leave room for
    // one, not one per waiting task.
    const ahead = [...byName.values()].filter((event) => event.worker === "spare");
    expect(ahead).toHaveLength(1);
    expect(early).toContain(ahead[0]!.pid);
  });

  it("starts none with a concurrency of 1 or a single core", async () => {
    for (const [concurrency, cores] of [
      [1, 2],
      [4, 1],
    ] as const) {
      const server = await createRehearsal({ s: [{ text: "done {{prompt}}", delay_ms: 500 }] });
      const { orchestrator } = await rehearsedOrchestrator(server, { concurrency, machine: machine(cores), script: () => "s" });
      const started: Started[] = [];
      orchestrator.on((event) => event.type === "task_started" && started.push(event));
      const peak = sampleClaudeChildren();
      const results = await Promise.all(["one", "two"].map((name) => orchestrator.run({ name, prompt: name })));
      expect(results.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
      expect(
        started.every((event) => event.worker === "cold"),
        `concurrency ${concurrency}, ${cores} core(s)`,
      ).toBe(true);
      if (concurrency === 1) expect(await peak.stop()).toBe(1);
      else await peak.stop();
      await orchestrator.close();
    }
  });

  it("starts one for a planner's fan-out while the planner runs, and a copy takes it", async () => {
    const parsed = await parseSwarmConfig(
      JSON.stringify({
        concurrency: 2,
        tasks: [
          {
            name: "plan",
            prompt: "list the files",
            output_schema: { type: "object", properties: { files: { type: "array" } }, required: ["files"] },
          },
          { name: "fix", prompt: "fix {{item}}", for_each: "{{results.plan.structured.files}}", depends_on: ["plan"] },
        ],
      }),
      { baseDir: tmpdir(), env: {}, format: "json" },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const config = parsed.config;
    // The planner takes a while to answer; every copy of fix (and the process started for them) plays "fix".
    const server = await createRehearsal({
      plan: [{ tool_use: { name: "StructuredOutput", input: { files: ["a.ts", "b.ts"] } }, delay_ms: 2_000 }, { text: "planned" }],
      fix: [{ text: "fixed {{prompt}}" }],
    });
    const script = (context: WorkerContext) => (context.name.startsWith("fix") ? "fix" : context.name);
    const { orchestrator } = await rehearsedOrchestrator(server, { ...orchestratorOptionsFor(config), machine: machine(2), script });
    const started: Started[] = [];
    orchestrator.on((event) => event.type === "task_started" && started.push(event));

    const events: SwarmEvent[] = [];
    const running = (async () => {
      for await (const event of runSwarm({ config, orchestrator, signal: new AbortController().signal })) events.push(event);
    })();
    const early = await twoLive("a process for the fan-out while the planner runs");
    await running;
    // One request per copy: the process prepared for them asked the model nothing of its own.
    expect(server.requests.filter((request) => request.script === "fix")).toHaveLength(2);

    const settled = settledOf(events);
    expect(settled.map((event) => [event.task.name, event.result.status]).sort()).toEqual([
      ["fix", "succeeded"],
      ["fix-0", "succeeded"],
      ["fix-1", "succeeded"],
      ["plan", "succeeded"],
    ]);
    const copies = started.filter((event) => event.task.name.startsWith("fix-"));
    const prepared = copies.filter((event) => event.worker === "spare");
    expect(prepared).toHaveLength(1);
    expect(early).toContain(prepared[0]!.pid);
  });
});
