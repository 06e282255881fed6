// Plan windows on the real CLI: logged in as a subscription, the CLI reports the API's plan-window headers (which the
// scripted model sends) as rate_limit_event; past plan_usage's threshold, or refused, no task starts until the reset.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator, resultsByName } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

const scripts = {
  warn: [{ text: "first", plan_window: { utilization: 95, resets_in_s: 3 } }],
  plain: [{ text: "done {{prompt}}" }],
};
const scriptOf = (name: string) => (name === "t1" ? "warn" : "plain");

describe("plan windows on the real CLI", () => {
  it("a window at 95 % (pause_at 90) holds new starts until its reset, then the run completes", async () => {
    const server = await createRehearsal(scripts);
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 1,
      subscription: true,
      planUsage: { pauseAt: 90 },
      script: (context) => scriptOf(context.name),
    });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const results = await resultsByName(orchestrator.map(["t1", "t2", "t3"].map((name) => ({ name, prompt: name }))));

    for (const result of results.values()) expect(result.status, result.error?.message).toBe("succeeded");
    const windows = events.filter((e) => e.type === "plan_window");
    expect(windows.map((e) => e.state)).toEqual(["waiting", "resumed"]);
    const waiting = windows[0]!;
    expect(waiting).toMatchObject({ window: "five_hour", utilization: 95, rejected: false });
    // Nothing started between the report and the reset.
    expect(results.get("t2")!.startedAt).toBeGreaterThanOrEqual(waiting.resetsAt);
    expect(results.get("t3")!.startedAt).toBeGreaterThanOrEqual(waiting.resetsAt);
  }, 120_000);

  it("a refused turn waits for the window's reset and runs again instead of failing", async () => {
    const server = await createRehearsal({ refused: [{ text: "after the reset", plan_window: { utilization: 100, resets_in_s: 2 } }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { subscription: true, script: () => "refused" });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const result = await orchestrator.run({ name: "refused", prompt: "go" });

    expect(result.status, result.error?.message).toBe("succeeded");
    expect(result.text).toBe("after the reset");
    const waiting = events.find((e) => e.type === "plan_window" && e.state === "waiting");
    expect(waiting).toMatchObject({ rejected: true });
    expect(server.requests.filter((r) => r.outcome !== "side").map((r) => r.outcome)).toEqual(["failed", "played"]);
    expect(server.requests.at(-1)!.at).toBeGreaterThanOrEqual((waiting as { resetsAt: number }).resetsAt);
  }, 120_000);

  it("an API-key run is not held: the CLI reports no plan window to it", async () => {
    const server = await createRehearsal(scripts);
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 1,
      planUsage: { pauseAt: 90 },
      script: (context) => scriptOf(context.name),
    });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const results = await resultsByName(orchestrator.map(["t1", "t2"].map((name) => ({ name, prompt: name }))));
    for (const result of results.values()) expect(result.status).toBe("succeeded");
    expect(events.filter((e) => e.type === "plan_window")).toEqual([]);
    expect(events.some((e) => e.type === "task_message" && e.message.type === "rate_limit_event")).toBe(false);
  }, 120_000);
});
