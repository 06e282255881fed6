// Where a replay does a recorded steering action again: by the turns of the task's conversation, each action once, unplaceable ones said.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import type { SummarySteering } from "../../src/run/record/schema.ts";
import { isDue, ReplaySteering, type SteeringTarget } from "../../src/run/replay/steering.ts";

const at = "2026-11-29T07:00:00.000Z";
const send = (task: string, step: number | undefined): SummarySteering => ({
  task,
  action: "send",
  from: "the test",
  at,
  text: "look at B",
  ...(step !== undefined && { step }),
});
const stop = (task: string, step: number): SummarySteering => ({ task, action: "stop", from: null, at, step });

/** A target that keeps what it was asked, and whose task has `replies` replies; `emit` is its event stream. */
function fakeTarget() {
  const done: string[] = [];
  const listeners: ((event: OrchestratorEvent) => void)[] = [];
  const state = { replies: 0 };
  const target: SteeringTarget = {
    sendToTask: (task, text, origin) => void done.push(`send ${task} ${text} ${origin?.from}`),
    stopTask: (task) => void done.push(`stop ${task}`),
    interruptTask: async (task) => void done.push(`interrupt ${task}`),
    runningTaskStep: () => state.replies,
    on: (listener) => {
      listeners.push(listener);
      return () => {};
    },
  };
  const emit = (event: OrchestratorEvent) => {
    for (const listener of listeners) listener(event);
  };
  const reply = (task: string) => {
    state.replies += 1;
    emit({ type: "task_message", task: { id: "1", name: task }, message: { type: "assistant" } } as unknown as OrchestratorEvent);
  };
  return { target, done, reply, emit };
}

describe("placing a recorded steering action in a replay", () => {
  it("a message taken in at step n goes while reply n-1 is asked for; a stop done at n once reply n-1 is in; step 0 at the first request", () => {
    const placed = (entry: SummarySteering) => ({ ...entry, step: entry.step ?? 0 });
    expect([0, 1, 2].map((asked) => isDue(placed(send("a", 2)), { asked }))).toEqual([false, true, false]);
    expect(isDue(placed(send("a", 1)), { asked: 0 })).toBe(true);
    expect(isDue(placed(send("a", 0)), { asked: 0 })).toBe(true);
    expect(isDue(placed(send("a", 2)), { replies: 2 })).toBe(false);
    expect([0, 1, 2].map((replies) => isDue(placed(stop("a", 2)), { replies }))).toEqual([false, false, true]);
    expect(isDue(placed(stop("a", 2)), { asked: 1 })).toBe(false);
    expect(isDue(placed(stop("a", 0)), { asked: 0 })).toBe(true);
  });

  it("does each action once, on its own task, and holds the requests of a task it stopped", () => {
    const { target, done, reply } = fakeTarget();
    const steering = new ReplaySteering([send("a", 1), stop("b", 1), stop("c", 0)]);
    steering.steer(target);
    expect(steering.turn({ name: "b", step: 0 })).toBeUndefined();
    expect(steering.turn({ name: "a", step: 0 })).toBeUndefined();
    expect(steering.turn({ name: "a:subagent", step: 0 })).toBeUndefined();
    expect(steering.turn({ name: "a", step: 0 })).toBeUndefined();
    expect(done).toEqual(["send a look at B the test"]);
    reply("b");
    expect(done).toEqual(["send a look at B the test", "stop b"]);
    // The stopped task's next request gets no answer: its process is going.
    expect(steering.turn({ name: "b", step: 1 })).toBe("hold");
    expect(steering.turn({ name: "c", step: 0 })).toBe("hold");
    expect(done).toEqual(["send a look at B the test", "stop b", "stop c"]);
    expect([steering.warnings, steering.divergences]).toEqual([[], []]);
  });

  it("a record without steps is a warning; an action that failed, never came or reached its agent elsewhere is a divergence", () => {
    const { target, emit } = fakeTarget();
    const steering = new ReplaySteering([
      send("a", undefined),
      { ...stop("b", 3), step: undefined },
      stop("b", 3),
      send("c", 1),
      send("d", 1),
      send("e", 1),
    ]);
    steering.steer({
      ...target,
      sendToTask: (task) => {
        if (task === "c") throw new Error("c is not running");
      },
    });
    for (const name of ["c", "d", "e"]) steering.turn({ name, step: 0 });
    emit({ type: "task_steer_taken", task: { id: "4", name: "d" }, step: 2, at: 0 } as unknown as OrchestratorEvent);
    expect(steering.warnings).toEqual([
      'replay: the message "look at B" to a is not done again: the record has no step for it (its agent never took it in, or an older cadre recorded it), so it cannot be placed',
      "replay: the stop of b is not done again: the record has no step for it (an older cadre recorded it), so it cannot be placed",
    ]);
    const got = () => steering.divergences.map((divergence) => [divergence.script, divergence.step, divergence.kind, divergence.got]);
    expect(got()).toEqual([
      ["c", 1, "steering", "not done: c is not running"],
      ["d", 1, "steering", "taken in at step 2"],
    ]);
    // Once the run is over: what never came, and a message never taken in.
    steering.finish();
    expect(got().slice(2)).toEqual([
      ["b", 3, "steering", "not done: its task never reached step 3"],
      ["e", 1, "steering", "not taken in by its agent"],
    ]);
    expect(steering.divergences[0]?.message).toBe(
      'replay diverged: c, turn 1: a recorded send was not done again where it was; expected "the message \\"look at B\\" to c at step 1", got "not done: c is not running"',
    );
  });
});
