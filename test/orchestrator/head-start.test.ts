// While the first task checks the way to the model (the access check), a process for the tasks waiting behind it
// starts on a core the check leaves idle: no task's yet, it asks the model nothing, and the next task takes it. At most
// one per other core and within the concurrency. On the real CLI.
import { describe, expect, it } from "vitest";
import type { MachineProbe, OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { liveClaudeChildren, sampleClaudeChildren } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

type Started = Extract<OrchestratorEvent, { type: "task_started" }>;

const machine = (cores: number): MachineProbe => ({ cores: () => cores, freeMemoryBytes: () => 16 * 2 ** 30 });

describe("a process started ahead during the access check", () => {
  it("starts beside the first task's, asks the model nothing, and serves the next task", async () => {
    // The first reply takes a while: the check is still open when the second process is up.
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}", delay_ms: 2_000 }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 4, machine: machine(2), script: () => "s" });
    const started: Started[] = [];
    orchestrator.on((event) => event.type === "task_started" && started.push(event));

    const runs = ["one", "two", "three"].map((name) => orchestrator.run({ name, prompt: name }));
    const early = await until(
      async () => {
        const live = await liveClaudeChildren();
        return live.length === 2 ? live : undefined;
      },
      30_000,
      "a second process while the first task probes",
    );
    expect(server.requests.length, "the process started ahead asks the model nothing").toBeLessThanOrEqual(1);

    const results = await Promise.all(runs);
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
});
