// A worker's turn lasts until its session is done: background workflows, agents and shells, and the turn their notification starts.
import { describe, expect, it } from "vitest";
import { ALLOWED_TOOL, type BackgroundKind, backgroundScripts, claudePrintResult, FINAL_TEXT } from "../support/background.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("a worker whose model launches background work", () => {
  it.each<BackgroundKind>(["workflow", "bash", "agent"])(
    "answers with the text of the turn after the %s reported back, as claude -p does",
    async (kind) => {
      const server = await createRehearsal(backgroundScripts("s", kind));
      const { worker } = await startRehearsedWorker(server, "s", { allowedTools: [ALLOWED_TOOL[kind]] });
      const seen: string[] = [];
      worker.on((event) => {
        if (event.type === "background_task") seen.push(`${event.task.kind}:${event.task.status}`);
      });

      const turn = await worker.run("go");

      expect(turn.isError).toBe(false);
      expect(turn.text).toBe(FINAL_TEXT);
      expect(turn.text).toBe(await claudePrintResult(server, "s", "go", ALLOWED_TOOL[kind]));
      expect(turn.result.origin?.kind).toBe("task-notification");
      const results = turn.messages.filter((message) => message.type === "result");
      expect(results.map((result) => result.result)).toEqual(["launched", FINAL_TEXT]);
      expect(turn.numTurns).toBe(results.reduce((sum, result) => sum + (result.num_turns ?? 0), 0));
      const [task] = worker.backgroundTasks;
      expect(task).toMatchObject({ kind: { workflow: "local_workflow", bash: "local_bash", agent: "local_agent" }[kind], status: "completed" });
      expect(worker.runningBackgroundTasks).toEqual([]);
      expect(seen.at(-1)).toBe(`${task!.kind}:completed`);

      const agents = server.requests.filter((request) => request.sessionId === turn.sessionId && request.agentId !== undefined);
      expect(agents).toHaveLength({ workflow: 3, bash: 0, agent: 1 }[kind]);
      if (kind === "workflow") {
        expect(
          agents
            .map((request) => JSON.stringify(request.messages))
            .sort()
            .join("\n"),
        ).toMatch(/number 1[\s\S]*number 2[\s\S]*number 3/);
        expect(task!.agents?.map((agent) => [agent.label, agent.phase, agent.state])).toEqual([
          ["agent-1", "Fan", "done"],
          ["agent-2", "Fan", "done"],
          ["agent-3", "Fan", "done"],
        ]);
        expect(task!.phases).toEqual(["Fan"]);
        expect(task!.result).toEqual({ replies: ["agent reply", "agent reply", "agent reply"] });
      }
      // The session's tokens include the background agents' (the main loop's own results do not); a workflow's
      // total_tokens may differ from the running totals by a few tokens.
      const total = (u: Record<string, unknown>) =>
        ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"].reduce(
          (sum, key) => sum + Number(u[key] ?? 0),
          0,
        );
      const mainTokens = results.reduce((sum, result) => sum + total(result.usage ?? {}), 0);
      const agentTokens = task!.usage?.totalTokens ?? 0;
      if (kind !== "bash") expect(agentTokens).toBeGreaterThan(0);
      expect(Math.abs(total(turn.usage) - mainTokens - agentTokens)).toBeLessThanOrEqual(agentTokens * 0.001);
    },
  );

  it("stops a background shell with stop_task and reads its output with get_task_output", async () => {
    const server = await createRehearsal(backgroundScripts("s", "bash", { bashCommand: "echo started-output; sleep 300" }));
    const { worker } = await startRehearsedWorker(server, "s", { allowedTools: ["Bash"] });
    const started = new Promise<string>((resolve) => {
      worker.on((event) => {
        if (event.type === "background_task" && event.task.status === "running") resolve(event.task.id);
      });
    });
    const turn = worker.run("go");
    const taskId = await started;
    let output = await worker.taskOutput(taskId);
    while (!output.output.includes("started-output")) output = await worker.taskOutput(taskId);
    expect(output).toMatchObject({ truncated: false });
    expect(worker.runningBackgroundTasks.map((task) => task.id)).toEqual([taskId]);

    await worker.stopTask(taskId);
    const result = await turn;
    expect(worker.backgroundTasks[0]).toMatchObject({ id: taskId, status: expect.stringMatching(/stopped|killed|failed/) });
    expect(result.text.length).toBeGreaterThan(0);
  });
});
