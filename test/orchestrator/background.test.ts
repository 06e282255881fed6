// A task is done when its session is: the workflow, background agent or shell its model launched, and the turn
// their notification starts, are part of the task, its text, tokens and cost; its limits stop them too.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { ALLOWED_TOOL, type BackgroundKind, backgroundScripts, claudePrintResult, FINAL_TEXT } from "../support/background.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { descendants, isGone } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";

const tokens = (usage: { inputTokens: number; outputTokens: number; cacheReadInputTokens: number; cacheCreationInputTokens: number }) =>
  usage.inputTokens + usage.outputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;

/** An orchestrator whose task "t" launches a workflow whose agents never answer in time; the task's pid and a workflow agent's start, when they come. */
async function slowWorkflow() {
  const server = await createRehearsal(backgroundScripts("t", "workflow", { agentDelayMs: 60_000 }));
  const { orchestrator } = await rehearsedOrchestrator(server, { defaults: { allowedTools: ["Workflow"] } });
  let started: number | undefined;
  const agentStarted = new Promise<void>((resolve) =>
    orchestrator.on((event) => {
      if (event.type === "task_started") started = event.pid;
      if (event.type === "background_task" && event.background.agents?.some((agent) => agent.agentId !== undefined)) resolve();
    }),
  );
  return { server, orchestrator, agentStarted, pid: () => started! };
}

describe("a task whose model launches background work", () => {
  it.each<BackgroundKind>(["workflow", "bash", "agent"])(
    "with a %s succeeds with the text of the turn after the notification, and counts the background agents' tokens and cost",
    async (kind) => {
      const server = await createRehearsal(backgroundScripts("t", kind));
      const { orchestrator } = await rehearsedOrchestrator(server, { defaults: { allowedTools: [ALLOWED_TOOL[kind]] } });
      const events: OrchestratorEvent[] = [];
      orchestrator.on((event) => events.push(event));

      const result = await orchestrator.run({ name: "t", prompt: "go" });

      expect(result.status, result.error?.message).toBe("succeeded");
      expect(result.text).toBe(FINAL_TEXT);
      expect(result.text).toBe(await claudePrintResult(server, "t", "go", ALLOWED_TOOL[kind]));
      const agents = server.requests.filter((request) => request.sessionId === result.sessionId && request.agentId !== undefined);
      expect(agents).toHaveLength({ workflow: 3, bash: 0, agent: 1 }[kind]);
      const [background] = result.backgroundTasks ?? [];
      expect(background).toMatchObject({ status: "completed", kind: { workflow: "local_workflow", bash: "local_bash", agent: "local_agent" }[kind] });
      if (kind === "workflow") expect(background!.agents?.map((agent) => agent.state)).toEqual(["done", "done", "done"]);

      // Cost: the CLI's running total at the last result, which includes the background agents.
      const results = events.flatMap((event) => (event.type === "task_message" && event.message.type === "result" ? [event.message] : []));
      expect(results.map((message) => message.result)).toEqual(["launched", FINAL_TEXT]);
      expect(result.costUsd).toBeCloseTo(results.at(-1)!.total_cost_usd!, 10);
      expect(result.numTurns).toBe(results.reduce((sum, message) => sum + (message.num_turns ?? 0), 0));
      // Tokens: the main loop's results plus the background agents' (the results' own usage leaves them out).
      const mainLoop = results.reduce(
        (sum, message) =>
          sum +
          (message.usage?.input_tokens ?? 0) +
          (message.usage?.output_tokens ?? 0) +
          (message.usage?.cache_read_input_tokens ?? 0) +
          (message.usage?.cache_creation_input_tokens ?? 0),
        0,
      );
      const agentTokens = background!.usage?.totalTokens ?? 0;
      if (kind !== "bash") expect(agentTokens).toBeGreaterThan(0);
      expect(Math.abs(tokens(result.usage) - mainLoop - agentTokens)).toBeLessThanOrEqual(agentTokens * 0.001);
      expect(orchestrator.totals.usage).toEqual(result.usage);

      // The background task was seen while it ran, as a child of the task.
      const seen = events.filter((event) => event.type === "background_task");
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((event) => event.task.name === "t")).toBe(true);
      expect(seen.some((event) => event.background.status === "running")).toBe(true);
    },
  );

  it("a time limit shorter than the workflow ends the task as timed out, stops the workflow and leaves no process", async () => {
    const { server, orchestrator, pid, agentStarted } = await slowWorkflow();
    const running = orchestrator.run({ name: "t", prompt: "go", timeoutMs: 8_000 });
    await agentStarted;
    const below = await descendants(pid());
    const result = await running;

    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("TASK_TIMEOUT");
    expect(result.text).toBe("");
    expect(result.backgroundTasks?.[0]).toMatchObject({ kind: "local_workflow", status: expect.stringMatching(/stopped|killed/) });
    expect(await isGone(pid())).toBe(true);
    for (const child of below) expect(await isGone(child.pid), `${child.comm} (${child.pid})`).toBe(true);
    // The workflow's agents never answered: none of the final turn was played.
    expect(server.requests.some((request) => request.step === 2 && request.agentId === undefined)).toBe(false);
  });

  it.each(["the task's signal", "the orchestrator's close"])(
    "%s while the workflow runs cancels the task, stops the workflow and leaves no process",
    async (stop) => {
      const { orchestrator, pid, agentStarted } = await slowWorkflow();
      const abort = new AbortController();
      const running = orchestrator.run({ name: "t", prompt: "go", signal: abort.signal });
      await agentStarted;
      if (stop === "the task's signal") abort.abort();
      else void orchestrator.close();
      const result = await running;

      expect(result.status).toBe("cancelled");
      expect(result.backgroundTasks?.[0]?.status).toMatch(/stopped|killed/);
      expect(await isGone(pid())).toBe(true);
    },
  );

  it("a budget reached while the workflow runs stops it, and the task is cancelled for the budget", async () => {
    const server = await createRehearsal(backgroundScripts("t", "workflow", { agentDelayMs: 60_000 }));
    const { orchestrator } = await rehearsedOrchestrator(server, { budgetUsd: 0.01, defaults: { allowedTools: ["Workflow"] } });
    let pid: number | undefined;
    orchestrator.on((event) => {
      if (event.type === "task_started") pid = event.pid;
    });
    const result = await orchestrator.run({ name: "t", prompt: "go" });
    expect(result.status).toBe("cancelled");
    expect(result.error?.code).toBe("BUDGET_EXCEEDED");
    expect(result.backgroundTasks?.[0]?.status).toMatch(/stopped|killed/);
    expect(await isGone(pid!)).toBe(true);
  });
});
