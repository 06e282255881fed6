// Scheduling on the real CLI: limits hold, measured from outside.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { sampleClaudeChildren } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { collect } from "../support/streams.ts";

describe("orchestrator fan-out", () => {
  it("runs 24 tasks at concurrency 4 with never more than 4 live claude processes", async () => {
    const server = await createRehearsal({ echo: [{ text: "done: {{prompt}}", delay_ms: 200 }] });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 4,
      // Every task plays the same script.
      script: () => "echo",
    });
    const tasks = Array.from({ length: 24 }, (_, i) => ({ name: `t${i}`, prompt: `item ${i}` }));
    const sampler = sampleClaudeChildren();
    const results = await collect(orchestrator.map(tasks));
    const peak = await sampler.stop();
    expect(results).toHaveLength(24);
    for (const result of results) {
      expect(result.status, result.error?.message).toBe("succeeded");
      expect(result.text).toBe(`done: item ${result.name.slice(1)}`);
    }
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(orchestrator.scheduler.peakRunning).toBe(4);
    expect(orchestrator.totals.tasks.succeeded).toBe(24);
    expect(orchestrator.totals.costUsd).toBeGreaterThan(0);
  }, 180_000);

  it("holds a per-agent limit while other agents run", async () => {
    const server = await createRehearsal({ slow: [{ text: "slow done", delay_ms: 1_500 }], fast: [{ text: "fast done" }] });
    const events: OrchestratorEvent[] = [];
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 4,
      agentLimits: { slowpoke: 1 },
      agents: {
        slowpoke: { description: "slow", prompt: "You are slow." },
        quick: { description: "fast", prompt: "You are quick." },
      },
    });
    orchestrator.on((e) => events.push(e));
    const specs = [
      ...Array.from({ length: 3 }, (_, i) => ({ name: "slow", prompt: `s${i}`, agent: "slowpoke" })),
      ...Array.from({ length: 3 }, (_, i) => ({ name: "fast", prompt: `f${i}`, agent: "quick" })),
    ];
    const results = await collect(orchestrator.map(specs));
    expect(results.every((r) => r.status === "succeeded")).toBe(true);
    // Measured where the work happens: the model server never saw two slowpoke requests at once.
    const slow = server.requests.filter((r) => r.script === "slow");
    expect(slow).toHaveLength(3);
    const overlaps = slow.filter((a, i) => slow.some((b, j) => i !== j && Math.abs(a.at - b.at) < 1_400));
    expect(overlaps).toEqual([]);
    // And the quick agent was not held behind the slow one: all its tasks finished before the last slow one.
    const finished = events.filter((e) => e.type === "task_finished").map((e) => (e.type === "task_finished" ? e.task.agent : ""));
    expect(finished.at(-1)).toBe("slowpoke");
  }, 120_000);
});
