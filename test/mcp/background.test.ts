// A parent steering a child's background work over MCP: wait_sessions waits for it; list, stop and read it.
import { describe, expect, it } from "vitest";
import { backgroundScripts, claudePrintResult, FINAL_TEXT } from "../support/background.ts";
import { call, startStdioCadre, textOf } from "../support/mcp.ts";
import { createRehearsal } from "../support/rehearsal.ts";

describe("a child session's background work over MCP", () => {
  it("wait_sessions waits for the child's workflow and the turn its notification starts; the answer is claude -p's", async () => {
    const scripts = backgroundScripts("wf", "workflow", { agentDelayMs: 1_000 });
    const { client } = await startStdioCadre(scripts);

    const spawned = await call(client, "spawn_session", { prompt: "go", name: "wf", allowed_tools: ["Workflow"], wait_s: 0 });
    expect(spawned.isError).toBeFalsy();
    const waited = await call(client, "wait_sessions", { session_ids: ["wf"], mode: "all", timeout_s: 50 });
    expect(waited.structuredContent!.done).toBe(true);
    const [session] = waited.structuredContent!.sessions as Record<string, any>[];
    expect(session).toMatchObject({ status: "idle", turns: 1, result: FINAL_TEXT });
    expect(session!.background_tasks).toEqual([
      expect.objectContaining({
        kind: "local_workflow",
        status: "completed",
        agents: expect.arrayContaining([expect.objectContaining({ state: "done" })]),
      }),
    ]);
    expect(session!.background_tasks[0].agents).toHaveLength(3);

    const listed = await call(client, "list_background_tasks", { session_id: "wf" });
    expect(listed.structuredContent!.background_tasks).toEqual(session!.background_tasks);
    expect(textOf(listed)).toMatch(/local_workflow "three agents": completed/);

    const server = await createRehearsal(scripts);
    expect(session!.result).toBe(await claudePrintResult(server, "wf", "go", "Workflow"));
  });

  it("lists a running background shell, reads its output, and stops it; the child's turn then ends", async () => {
    const { client } = await startStdioCadre(backgroundScripts("sh", "bash", { bashCommand: "echo started-output; sleep 300" }));
    await call(client, "spawn_session", { prompt: "go", name: "sh", allowed_tools: ["Bash"], wait_s: 0 });

    let tasks: Record<string, any>[] = [];
    while (tasks.length === 0) tasks = (await call(client, "list_background_tasks", { session_id: "sh" })).structuredContent!.background_tasks;
    const [shell] = tasks;
    expect(shell).toMatchObject({ kind: "local_bash", status: "running" });
    let output = await call(client, "get_task_output", { session_id: "sh", task_id: shell!.task_id });
    while (!String(output.structuredContent!.output).includes("started-output")) {
      output = await call(client, "get_task_output", { session_id: "sh", task_id: shell!.task_id });
    }
    expect(output.structuredContent).toMatchObject({ task_id: shell!.task_id, truncated: false });

    // The shell holds the child's turn: a short wait ends with the child still running.
    const early = await call(client, "wait_sessions", { session_ids: ["sh"], mode: "all", timeout_s: 1 });
    expect(early.structuredContent!.done).toBe(false);
    expect((early.structuredContent!.sessions as Record<string, any>[])[0]!.status).toBe("running");

    const stopped = await call(client, "stop_background_task", { session_id: "sh", task_id: shell!.task_id });
    expect(stopped.isError).toBeFalsy();
    const waited = await call(client, "wait_sessions", { session_ids: ["sh"], mode: "all", timeout_s: 50 });
    expect(waited.structuredContent!.done).toBe(true);
    const [session] = waited.structuredContent!.sessions as Record<string, any>[];
    expect(session!.status).toBe("idle");
    expect(session!.background_tasks[0].status).toMatch(/stopped|killed/);

    const unknown = await call(client, "get_task_output", { session_id: "sh", task_id: "no-such-task" });
    expect(unknown.isError).toBe(true);
  });
});
