// The state stream of a live run: however many events a burst brings, the page gets one update,
// and that update carries only the rows that changed. Counted by events, not by timing: a burst
// applied in one go is one change for the stream, whatever the machine's speed.
import { afterEach, describe, expect, it } from "vitest";
import type { RowView, WireSnapshot } from "../../src/dashboard/feed.ts";
import { LiveRun, type RunSnapshot, serveDashboard, singleRun } from "../../src/dashboard/index.ts";
import { emptyUsage } from "../../src/orchestrator/accounting.ts";
import type { TaskInfo, TaskResult } from "../../src/orchestrator/index.ts";
import { parseCliMessage } from "../../src/protocol/index.ts";
import { RunModel } from "../../src/run/index.ts";
import { result as taskResult } from "../support/swarm.ts";

const TASKS = 3_000;
const names = Array.from({ length: TASKS }, (_, i) => `task-${i}`);
const info = (i: number, parentId?: string): TaskInfo => ({ id: `id-${i}`, name: names[i] ?? `child-${i}`, agent: "worker", parentId });

function result(task: TaskInfo): TaskResult {
  const times = { queuedMs: 0, startedAt: 1, finishedAt: 2, durationMs: 1 };
  return taskResult(task.name, "succeeded", {
    id: task.id,
    agent: task.agent,
    text: "done",
    costUsd: 0.001,
    usage: emptyUsage(),
    numTurns: 1,
    ...times,
    sessionId: `s-${task.id}`,
  });
}

/** A snapshot as sent, its rows lists of values in the order of `columns`, back to rows. */
function fromWire(wire: WireSnapshot): RunSnapshot {
  const rows = wire.rows.map((values) => Object.fromEntries(wire.columns.map((column, i) => [column, values[i]])) as unknown as RowView);
  return { ...wire, rows };
}

/** The named events of a server-sent event stream, parsed, as they come. */
class StateStream {
  readonly events: { event: string; data: RunSnapshot }[] = [];
  readonly #waiters: (() => void)[] = [];
  readonly #abort = new AbortController();

  static async open(url: string): Promise<StateStream> {
    const stream = new StateStream();
    const response = await fetch(url, { signal: stream.#abort.signal });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    void stream.#read(response.body!);
    return stream;
  }

  async #read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) this.events.push({ event, data: fromWire(JSON.parse(data) as WireSnapshot) });
          for (const wake of this.#waiters.splice(0)) wake();
        }
      }
    } catch {
      // Closed by the test.
    }
  }

  /** Waits until `count` events have come. */
  async next(count: number): Promise<{ event: string; data: RunSnapshot }> {
    while (this.events.length < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.events[count - 1]!;
  }

  close(): void {
    this.#abort.abort();
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the state stream of a live run", () => {
  it("coalesces a burst of events into one update of the rows that changed, and sends all rows again when rows come", async () => {
    const model = new RunModel({ title: "burst", mode: "swarm", startedAt: 0, tasks: names.map((name) => ({ name, agent: "worker" })) });
    const live = new LiveRun({ id: "burst", model });
    const serving = await serveDashboard(singleRun(live));
    cleanups.push(() => serving.close());
    const stream = await StateStream.open(`${serving.origin}/api/runs/burst/state?token=${serving.token}`);
    cleanups.push(() => stream.close());

    const first = await stream.next(1);
    expect(first.event).toBe("state");
    expect(first.data.rows).toHaveLength(TASKS);
    expect(first.data.totals.byStatus).toEqual({ waiting: TASKS });

    // Five events per task, 15,000 in all, in one go.
    let now = 10;
    for (let i = 0; i < TASKS; i++) {
      const task = info(i);
      const reply = parseCliMessage({ type: "assistant", message: { id: `m${i}`, role: "assistant", content: [{ type: "text", text: "hi" }] } });
      model.apply({ type: "task_queued", task }, now++);
      model.apply({ type: "task_started", task, attempt: 1, pid: 1, worker: "reused", startedAt: now }, now++);
      model.apply({ type: "task_message", task, message: reply }, now++);
      model.apply({ type: "cost", task, taskUsd: 0.001, totalUsd: 0.001 * (i + 1), totalUsage: emptyUsage() }, now++);
      model.apply({ type: "task_finished", task, result: result(task) }, now++);
    }
    const burst = await stream.next(2);
    expect(burst.event).toBe("patch");
    expect(burst.data.rows).toHaveLength(TASKS);
    expect(burst.data.totals.byStatus).toEqual({ succeeded: TASKS });
    expect(burst.data.seq).toBe(model.seq);

    // One more change: the next update has that row alone, and nothing came between.
    model.apply({ type: "task_rerun", task: { name: "task-7", agent: "worker" }, reason: "its prompt changed", resumedSession: undefined }, now++);
    const one = await stream.next(3);
    expect(one.event).toBe("patch");
    expect(one.data.rows.map((row) => [row.key, row.activity])).toEqual([["t:task-7", "runs again: its prompt changed"]]);

    // A spawned worker is a new row, placed after its parent: the page gets every row again.
    model.apply({ type: "task_queued", task: info(TASKS, "id-3") }, now++);
    const grown = await stream.next(4);
    expect(grown.event).toBe("state");
    expect(grown.data.rows).toHaveLength(TASKS + 1);
    expect(grown.data.rows[4]).toMatchObject({ key: `id:id-${TASKS}`, parent: "t:task-3", kind: "child" });
    expect(stream.events).toHaveLength(4);
  });
});
