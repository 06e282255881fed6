// A turn's signal outlives the turn (a run's, or a reused process's next tasks'): an ended turn leaves no listener on it.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import type { TurnFailedError } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("a turn's abort signal", () => {
  it("holds no listener of a turn once the turn has ended, however many turns it served", { timeout: 60_000 }, async () => {
    const server = await createRehearsal({ talk: [{ text: "one" }, { text: "two" }, { text: "three" }] });
    const { worker } = await startRehearsedWorker(server, "talk");
    const run = new AbortController();
    for (const [prompt, answer] of [
      ["first", "one"],
      ["second", "two"],
      ["third", "three"],
    ]) {
      const turn = await worker.run(prompt!, { signal: run.signal });
      expect(turn.text).toBe(answer);
    }
    expect(getEventListeners(run.signal, "abort")).toEqual([]);

    // A turn still running keeps its listener, and aborting it interrupts the turn.
    const slow = await createRehearsal({ wait: [{ text: "late", delay_ms: 30_000 }] });
    const { worker: waiting } = await startRehearsedWorker(slow, "wait");
    const stop = new AbortController();
    const turn = waiting.run("wait", { signal: stop.signal });
    expect(getEventListeners(stop.signal, "abort")).toHaveLength(1);
    stop.abort();
    // An interrupted turn ended in error: run() rejects, with the result on the error.
    const error = await turn.then(
      () => undefined,
      (why: unknown) => why as TurnFailedError,
    );
    expect([error?.code, error?.result.interrupted]).toEqual(["INTERRUPTED", true]);
    expect(getEventListeners(stop.signal, "abort")).toEqual([]);
  });
});
