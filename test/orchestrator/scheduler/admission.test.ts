// A fan-out waits as small entries past a few times its lane's limit, and is admitted in the
// scheduler's own order: the highest priority first, then the earliest; a stop lets its tasks through.
import { describe, expect, it } from "vitest";
import { Admission, type Admitted, type Withdrawal } from "../../../src/orchestrator/scheduler/index.ts";
import { settle } from "../../support/wait.ts";

/** Enters `count` tasks and notes the order in which they are admitted. */
function enterMany(admission: Admission, count: number, options: { key?: string; priority?: number; signal?: AbortSignal; label?: string } = {}) {
  const admitted: { label: string; ticket: Admitted }[] = [];
  for (let i = 0; i < count; i++) {
    const label = `${options.label ?? "t"}${i}`;
    void admission
      .enter(options.key, options.priority ?? 0, options.signal ?? new AbortController().signal)
      .then((ticket) => admitted.push({ label, ticket }));
  }
  return admitted;
}

describe("Admission", () => {
  it("admits 64 tasks (or four times the limit) of a lane at once, then one as each starts, first come first", async () => {
    const admission = new Admission(4);
    const admitted = enterMany(admission, 100);
    await settle();
    expect(admitted.map((a) => a.label)).toEqual(Array.from({ length: 64 }, (_, i) => `t${i}`));
    admitted[0]!.ticket.started();
    admitted[0]!.ticket.started(); // said twice: counted once
    admitted[1]!.ticket.started();
    await settle();
    expect(admitted.slice(64).map((a) => a.label)).toEqual(["t64", "t65"]);

    const wide = enterMany(new Admission(50), 300);
    await settle();
    expect(wide).toHaveLength(200);
  });

  it("keeps the scheduler's order: a higher priority passes the waiting ones, held ones start by priority", async () => {
    const admission = new Admission(1);
    const low = enterMany(admission, 70, { label: "low" });
    const mid = enterMany(admission, 3, { priority: 1, label: "mid" });
    await settle();
    // Above every admitted task still waiting: admitted at once, though the lane is full.
    expect(low).toHaveLength(64);
    expect(mid.map((a) => a.label)).toEqual(["mid0", "mid1", "mid2"]);
    const lower = enterMany(admission, 2, { priority: -1, label: "lower" });
    for (const { ticket } of [...low, ...mid]) ticket.started();
    await settle();
    // The six low ones held before the two lower ones, whatever came first.
    expect(low.slice(64).map((a) => a.label)).toEqual(["low64", "low65", "low66", "low67", "low68", "low69"]);
    expect(lower).toHaveLength(2);
  });

  it("gives an agent with a limit a lane of its own: a held fan-out of one agent does not hold back the others", async () => {
    const admission = new Admission(2, { slow: 1 });
    const slow = enterMany(admission, 200, { key: "slow", label: "slow" });
    const other = enterMany(admission, 10, { key: "fast", label: "fast" });
    await settle();
    expect(slow).toHaveLength(64);
    expect(other).toHaveLength(10);
  });

  it("lets every held task of a stop through when it aborts, to end as an aborted job does", async () => {
    const admission = new Admission(1);
    const stop = new AbortController();
    const held = enterMany(admission, 100, { signal: stop.signal });
    const others = enterMany(admission, 5, { label: "other" });
    await settle();
    expect(held).toHaveLength(64);
    stop.abort();
    await settle();
    expect(held).toHaveLength(100);
    expect(others).toHaveLength(0);
    // A stop already aborted is let through at once, however full the lane.
    const late = enterMany(admission, 1, { signal: stop.signal, label: "late" });
    await settle();
    expect(late).toHaveLength(1);
    expect(others).toHaveLength(0);
  });

  it("lets one held task through when it is withdrawn (a user stopped it), the others kept in their order", async () => {
    const admission = new Admission(1);
    const first = enterMany(admission, 64);
    const signal = new AbortController().signal;
    const withdrawals: Withdrawal[] = [{}, {}, {}];
    const held: string[] = [];
    for (const [i, withdrawal] of withdrawals.entries()) void admission.enter(undefined, 0, signal, withdrawal).then(() => held.push(`h${i}`));
    await settle();
    expect(first).toHaveLength(64);
    expect(held).toEqual([]);
    withdrawals[1]!.withdraw?.();
    await settle();
    expect(held).toEqual(["h1"]);
    // Withdrawn twice, or once admitted: nothing more is let through. The withdrawn one counts as admitted until it ends.
    withdrawals[1]!.withdraw?.();
    first[0]!.ticket.started();
    await settle();
    expect(held).toEqual(["h1"]);
    first[1]!.ticket.started();
    await settle();
    expect(held).toEqual(["h1", "h0"]);
    withdrawals[0]!.withdraw?.();
    await settle();
    expect(held).toEqual(["h1", "h0"]);
  });
});
