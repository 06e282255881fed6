// A worker's own telemetry (Claude Code's, CLAUDE_CODE_ENABLE_TELEMETRY) names cadre's run, task and agent, and only when the user turned it on.
import { describe, expect, it } from "vitest";
import { telemetryResource } from "../../src/orchestrator/worker-factory.ts";

const task = { kind: "task", name: "say/child", agent: "counter" } as const;

describe("a worker's OTEL_RESOURCE_ATTRIBUTES", () => {
  it("adds the run, task, agent and kind to the user's own attributes, escaped as the W3C baggage format wants", () => {
    const options = { inheritEnv: false, env: { CLAUDE_CODE_ENABLE_TELEMETRY: "1", OTEL_RESOURCE_ATTRIBUTES: "team=core" } };
    expect(telemetryResource(options, task, "run-1")).toBe(
      "team=core,cadre.run_id=run-1,cadre.task=say%2Fchild,cadre.agent=counter,cadre.worker_kind=task",
    );
    expect(
      telemetryResource(
        { inheritEnv: false, env: { CLAUDE_CODE_ENABLE_TELEMETRY: "true" } },
        { kind: "peer", name: "critic", agent: "critic" },
        undefined,
      ),
    ).toBe("cadre.task=critic,cadre.agent=critic,cadre.worker_kind=peer");
  });

  it("is left alone when the user did not turn Claude Code's telemetry on (cadre never does)", () => {
    for (const value of [undefined, "", "0", "false"]) {
      const env = { OTEL_RESOURCE_ATTRIBUTES: "team=core", ...(value !== undefined && { CLAUDE_CODE_ENABLE_TELEMETRY: value }) };
      expect(telemetryResource({ inheritEnv: false, env }, task, "run-1"), String(value)).toBeUndefined();
    }
  });
});
