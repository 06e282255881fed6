// The live state of a run as the dashboard shows it: the run's read-model, from the orchestrator's and the swarm's events alone.
import { describe, expect, it } from "vitest";
import { LiveRun } from "../../src/dashboard/index.ts";
import { emptyUsage } from "../../src/orchestrator/accounting.ts";
import type { TaskInfo, TaskResult } from "../../src/orchestrator/index.ts";
import { RunModel } from "../../src/run/index.ts";
import { result as taskResult } from "../support/swarm.ts";

const info = (id: string, name: string, parentId?: string): TaskInfo => ({ id, name, agent: undefined, parentId });

function result(task: TaskInfo, status: TaskResult["status"], error?: TaskResult["error"], costUsd = 0): TaskResult {
  const times = { queuedMs: 0, startedAt: undefined, finishedAt: 0, durationMs: 0 };
  return taskResult(task.name, status, {
    id: task.id,
    agent: undefined,
    text: "",
    costUsd,
    usage: emptyUsage(),
    numTurns: 1,
    ...times,
    sessionId: undefined,
    error,
  });
}

const keys = (run: LiveRun) => run.snapshot(0).rows.map((r) => `${r.key} ${r.status}${r.parent ? ` <${r.parent}` : ""}`);

describe("LiveRun", () => {
  it("binds config tasks by name, puts spawned workers after their parent, and lets the swarm have the last word", () => {
    const model = new RunModel({ title: "t", mode: "swarm", startedAt: 0, tasks: [{ name: "a" }, { name: "b", depends_on: ["a"] }, { name: "c" }] });
    const run = new LiveRun({ id: "r", model });
    const a = info("1", "a");
    model.apply({ type: "task_queued", task: a }, 10);
    // The slot is taken at 20; the worker is up at 30: the time in the queue ends at 20.
    model.apply({ type: "worker_state", task: a, state: "starting" }, 20);
    model.apply({ type: "task_started", task: a, attempt: 1, pid: 1, worker: "cold", startedAt: 20 }, 30);
    const child = info("2", "a/child", "1");
    const grandchild = info("3", "a/child/child", "2");
    model.apply({ type: "task_queued", task: child }, 40);
    model.apply({ type: "task_queued", task: grandchild }, 41);
    model.apply({ type: "task_queued", task: info("4", "a/child", "1") }, 42);
    expect(keys(run)).toEqual(["t:a running", "id:2 queued <t:a", "id:3 queued <id:2", "id:4 queued <t:a", "t:b waiting", "t:c waiting"]);

    model.apply({ type: "cost", task: a, taskUsd: 0.25, totalUsd: 0.3, totalUsage: emptyUsage() }, 50);
    model.apply({ type: "task_finished", task: a, result: result(a, "failed", { code: "X", message: "boom" }, 0.25) }, 60);
    model.apply(
      {
        type: "task_settled",
        task: { name: "b", agent: undefined },
        result: result(info("9", "b"), "skipped", { code: "DEPENDENCY_FAILED", message: 'dependency "a" failed' }),
        started: false,
      },
      61,
    );
    const snapshot = run.snapshot(100);
    const [rowA, , , , rowB] = snapshot.rows;
    expect(rowA).toMatchObject({ status: "failed", queuedMs: 10, startedAt: 20, runMs: 40, costUsd: 0.25, error: "boom" });
    expect(rowA!.phases.map((p) => p.status)).toEqual(["queued", "starting", "running", "failed"]);
    expect(rowB).toMatchObject({ status: "skipped", error: 'dependency "a" failed' });
    expect(snapshot.totals).toMatchObject({ tasks: 3, costUsd: 0.3, byStatus: { failed: 1, skipped: 1, waiting: 1 } });
  });

  it("names a for_each copy's group, the task as written, and a worker it spawns follows it", () => {
    const tasks = [{ name: "review-a", template: "review-{{item}}" }, { name: "review-b", template: "review-{{item}}" }, { name: "plain" }];
    const model = new RunModel({ title: "t", mode: "swarm", startedAt: 0, tasks });
    const run = new LiveRun({ id: "g", model });
    model.apply({ type: "task_queued", task: info("1", "review-b") }, 1);
    model.apply({ type: "task_queued", task: info("2", "review-b/child", "1") }, 2);
    expect(run.snapshot(3).rows.map((r) => [r.key, r.group, r.parent])).toEqual([
      ["t:review-a", "review-{{item}}", null],
      ["t:review-b", "review-{{item}}", null],
      ["id:2", null, "t:review-b"],
      ["t:plain", null, null],
    ]);
  });

  it("keeps a session's permission requests until they settle, and follows a session through failure and recovery", async () => {
    const answered: string[] = [];
    const model = new RunModel({ title: "t", mode: "sessions", startedAt: 0 });
    const run = new LiveRun({ id: "s", model, answer: (id, requestId) => answered.push(`${id} ${requestId}`) });
    const s = info("7", "builder");
    model.apply({ type: "session_status", task: s, status: "starting" }, 1);
    model.apply({ type: "session_status", task: s, status: "running" }, 2);
    const request = { requestId: "r1", toolName: "Bash", input: { command: "touch x" } } as never;
    model.apply({ type: "permission_request", task: s, requestId: "r1", request }, 3);
    expect(run.snapshot(4).rows[0]!.pending).toMatchObject([{ requestId: "r1", kind: "tool", ask: "use Bash" }]);
    run.answer("id:7", "r1", { decision: "allow" });
    expect(answered).toEqual(["7 r1"]);
    expect(() => run.answer("id:7", "r2", { decision: "allow" })).toThrow(/no waiting permission request/);
    model.apply({ type: "permission_settled", task: s, requestId: "r1" }, 5);
    expect(run.snapshot(6).rows[0]!.pending).toEqual([]);
    const conversation = (await run.conversation("id:7"))!;
    expect(conversation.entries.map((e) => e.kind)).toEqual(["permission", "permission_settled"]);

    model.apply({ type: "session_status", task: s, status: "failed" }, 7);
    model.apply({ type: "session_status", task: s, status: "running" }, 8);
    expect(run.snapshot(9).rows[0]!.status).toBe("running");
    model.apply({ type: "session_status", task: s, status: "closed" }, 10);
    expect(run.snapshot(11).rows[0]).toMatchObject({ status: "closed", finishedAt: 10, kind: "session" });
    expect(conversation.ended).toBe(true);
  });
});
