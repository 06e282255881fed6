// A task's background work in its trace: the workflow under the task's attempt, each of its agents under the workflow.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { THREE_AGENT_WORKFLOW } from "../support/background.ts";
import { bin, readSummary, repo } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";
import { otlpEnv, startOtlpReceiver } from "../support/otlp-receiver.ts";

const SWARM = `
name: traced-background
defaults: { allowed_tools: [Workflow] }
tasks:
  - { name: wf, prompt: Run the workflow. }
rehearsal:
  wf:
    - { tool_use: { name: Workflow, input: { script: ${JSON.stringify(THREE_AGENT_WORKFLOW)} } } }
    - { text: launched }
    - { text: the workflow reported back }
  "wf:subagent": [{ text: agent reply }]
`;

describe("a task's background work in its trace", () => {
  it("the workflow is a span under the task's attempt with its tokens and status, its three agents spans under it", async ({ tmp }) => {
    const receiver = await startOtlpReceiver();
    const file = join(tmp, "swarm.yaml");
    await writeFile(file, SWARM);
    const out = join(tmp, "out");
    const run = await execa("node", [bin, "run", file, "--rehearse", "--out", out], {
      cwd: repo,
      reject: false,
      env: otlpEnv(receiver, "http/json"),
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = await readSummary(out);
    const { spans } = receiver;

    const [workflow, ...others] = spans.filter((span) => span.attributes["cadre.span"] === "background_task");
    expect(others).toEqual([]);
    expect(workflow!.name).toBe("background local_workflow three agents");
    const attempt = spans.find((span) => span.spanId === workflow!.parentSpanId)!;
    expect(attempt.name).toBe("attempt 1");
    expect(spans.find((span) => span.spanId === attempt.parentSpanId)!.name).toBe("task wf");
    const recorded = summary.tasks[0]!.background_tasks![0]!;
    expect(workflow!.attributes).toMatchObject({
      "cadre.background.kind": "local_workflow",
      "cadre.background.status": "completed",
      "cadre.background.total_tokens": recorded.usage!.total_tokens,
      "cadre.workflow.name": "three",
      "cadre.workflow.agents": 3,
    });
    expect(workflow!.status).not.toBe(2);

    const agents = spans.filter((span) => span.attributes["cadre.span"] === "workflow_agent");
    expect(agents.map((span) => span.name).sort()).toEqual(["workflow agent agent-1", "workflow agent agent-2", "workflow agent agent-3"]);
    for (const agent of agents) {
      expect(agent.parentSpanId).toBe(workflow!.spanId);
      expect(agent.attributes).toMatchObject({ "cadre.workflow.agent_state": "done", "cadre.workflow.phase": "Fan" });
      expect(agent.attributes["cadre.background.total_tokens"]).toBeGreaterThan(0);
    }
  });
});
