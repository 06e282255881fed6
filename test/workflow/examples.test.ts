// The workflow-script examples run end to end offline, as their first lines tell a newcomer to run them:
// `cadre run examples/workflows/<x>.js --rehearse`, real claude workers against the scripted model.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

async function rehearse(example: string, out: string, ...extra: string[]) {
  const run = await cadre(["run", `examples/workflows/${example}.js`, "--rehearse", "--out", out, ...extra]);
  expect(run.exitCode, run.stderr).toBe(0);
  return { run, summary: JSON.parse(await readFile(join(out, "summary.json"), "utf8")) };
}

describe("workflow examples", () => {
  it("review: each dimension's findings are verified in a pipeline; every finding confirmed", { timeout: 240_000 }, async ({ tmp }) => {
    const { summary, run } = await rehearse("review", tmp);
    expect(summary.result.confirmed).toHaveLength(6);
    expect(summary.logs).toEqual(["6 of 6 findings confirmed"]);
    expect(summary.tasks.map((row: { phase: string }) => row.phase).sort()).toEqual([...Array(3).fill("Review"), ...Array(6).fill("Verify")]);
    expect(summary.tasks.every((row: { status: string; session_id: string | null }) => row.status === "succeeded" && row.session_id)).toBe(true);
    expect(run.stdout).toMatch(/^Review: ✓ review:bugs/m);
  });

  it("fan-out: the budget decides how many explorers run, and the merge gets all their notes; --json prints the events", {
    timeout: 240_000,
  }, async ({ tmp }) => {
    const { summary, run } = await rehearse("fan-out", tmp, "--budget", "1k", "--json");
    const events = run.stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { type: string; call?: { label: string } });
    expect(events.find((event) => event.type.startsWith("workflow_"))).toMatchObject({ type: "workflow_started", meta: { name: "fan-out" } });
    expect(events.findLast((event) => event.type.startsWith("workflow_"))).toMatchObject({
      type: "workflow_ended",
      outcome: { ok: true, agentCount: 3 },
    });
    // The task events a swarm run streams, for each agent() call, beside the script's own.
    const named = (type: string) => events.filter((event) => event.type === type).map((event) => (event as { task?: { name: string } }).task?.name);
    for (const type of ["task_queued", "task_started", "task_finished", "task_settled"])
      expect(named(type).sort(), type).toEqual(["explore-1", "explore-2", "merge"]);
    const order = events.map((event) => event.type);
    expect(order.indexOf("task_settled")).toBeGreaterThan(order.indexOf("task_finished"));
    expect(order.lastIndexOf("workflow_ended")).toBeGreaterThan(order.lastIndexOf("task_settled"));
    expect(
      events
        .filter((event) => event.type === "agent_ended")
        .map((event) => event.call?.label)
        .sort(),
    ).toEqual(["explore-1", "explore-2", "merge"]);
    expect(summary.result).toMatchObject({ angles: 2, answer: "merged answer" });
    expect(summary.logs).toEqual(["budget allows 2 of 6 angles; the rest are left out"]);
    const merge = summary.tasks.find((row: { label: string }) => row.label === "merge");
    expect(merge.prompt).toContain("1. a note from");
    expect(merge.prompt).toContain("2. a note from");
  });
});
