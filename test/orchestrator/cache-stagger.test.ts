// The cache stagger's rules, with messages shaped like the CLI's (no processes); test/orchestrator/cache-fan-out.test.ts runs it on the real CLI.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CacheStagger } from "../../src/orchestrator/cache-stagger.ts";
import { parseCliMessage } from "../../src/protocol/index.ts";

const usage = (write: number, read: number, write1h = 0) => ({
  input_tokens: 5,
  output_tokens: 1,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
  cache_creation: { ephemeral_5m_input_tokens: write - write1h, ephemeral_1h_input_tokens: write1h },
});
const messageStart = (u = usage(20_000, 0)) =>
  parseCliMessage({ type: "stream_event", event: { type: "message_start", message: { role: "assistant", content: [], usage: u } }, session_id: "s" });
const assistant = (extra: Record<string, unknown> = {}, u = usage(20_000, 0)) =>
  parseCliMessage({
    type: "assistant",
    message: { role: "assistant", model: "claude-x", content: [{ type: "text", text: "hi" }], usage: u },
    session_id: "s",
    ...extra,
  });
const apiError = parseCliMessage({
  type: "assistant",
  message: { role: "assistant", model: "<synthetic>", content: [{ type: "text", text: "API Error: 400" }] },
  error: "unknown",
});
const requesting = parseCliMessage({ type: "system", subtype: "status", status: "requesting", session_id: "s" });

/** Whether the promise settled within a few event-loop turns. */
async function settled(promise: Promise<unknown>): Promise<"resolved" | "rejected" | "pending"> {
  let state: "resolved" | "rejected" | "pending" = "pending";
  promise.then(
    () => (state = "resolved"),
    () => (state = "rejected"),
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return state;
}

const never = new AbortController().signal;

/** The stagger's timers and clock, moved by the test (setImmediate, which settled() uses, stays real). */
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
afterEach(() => {
  vi.useRealTimers();
});

describe("the cache stagger", () => {
  it("says a group is cold, so a process started ahead of its work may lead, until a response has warmed it", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    expect(stagger.isCold("g")).toBe(true);
    const leader = stagger.join("g");
    expect(stagger.isCold("g")).toBe(true);
    expect(await settled(leader.ready(never))).toBe("resolved");
    leader.observe(requesting);
    leader.observe(messageStart());
    expect(stagger.isCold("g")).toBe(false);
    expect(stagger.join("g").mayLead).toBe(false);
    expect(stagger.isCold("other")).toBe(true);
  });

  it("lets the first worker ready lead and holds the rest until its response begins", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const [a, b, c] = [stagger.join("g"), stagger.join("g"), stagger.join("g")];
    // All joined a cold group: any may lead, so all stream their first events.
    expect([a.mayLead, b.mayLead, c.mayLead]).toEqual([true, true, true]);
    // b is ready first: it leads, though a started first.
    expect(await settled(b.ready(never))).toBe("resolved");
    const aReady = a.ready(never);
    const cReady = c.ready(never);
    b.observe(requesting);
    expect(await settled(aReady)).toBe("pending");
    b.observe(messageStart());
    expect(await settled(aReady)).toBe("resolved");
    expect(await settled(cReady)).toBe("resolved");
    // The group is warm now: a worker that joins later neither leads nor waits.
    const d = stagger.join("g");
    expect(d.mayLead).toBe(false);
    expect(await settled(d.ready(never))).toBe("resolved");
  });

  it("takes the first assistant message as the sign when there are no streamed events, but not an API error", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const [a, b] = [stagger.join("g"), stagger.join("g")];
    await a.ready(never);
    const waiting = b.ready(never);
    a.observe(apiError);
    a.observe(assistant({ parent_tool_use_id: "toolu_1" }));
    expect(await settled(waiting)).toBe("pending");
    a.observe(assistant());
    expect(await settled(waiting)).toBe("resolved");
  });

  it("keeps groups apart: a worker of another group does not wait", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const reviewer = stagger.join("reviewer");
    const critic = stagger.join("critic");
    await reviewer.ready(never);
    expect(await settled(critic.ready(never))).toBe("resolved");
  });

  it("sends maxWaitMs after the leader's request when its response has not begun; later ones do not wait for that leader", async () => {
    fakeClock();
    const stagger = new CacheStagger({ maxWaitMs: 50, leaderStartMs: 60_000 });
    const [a, b, c] = [stagger.join("g"), stagger.join("g"), stagger.join("g")];
    await a.ready(never);
    const waiting = b.ready(never);
    // The leader has not asked yet: the cap has not started.
    await vi.advanceTimersByTimeAsync(100);
    expect(await settled(waiting)).toBe("pending");
    a.observe(requesting);
    await vi.advanceTimersByTimeAsync(49);
    expect(await settled(waiting)).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe("resolved");
    // The leader's cap is over: a worker ready now goes at once.
    expect(await settled(c.ready(never))).toBe("resolved");
  });

  it("waits leaderStartMs at most for a leader that never asks", async () => {
    fakeClock();
    const stagger = new CacheStagger({ maxWaitMs: 60_000, leaderStartMs: 50 });
    const [a, b] = [stagger.join("g"), stagger.join("g")];
    await a.ready(never);
    const waiting = b.ready(never);
    await vi.advanceTimersByTimeAsync(49);
    expect(await settled(waiting)).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe("resolved");
  });

  it("passes the lead to the first worker waiting when the leader ends before its response began", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const [a, b, c] = [stagger.join("g"), stagger.join("g"), stagger.join("g")];
    await a.ready(never);
    const bReady = b.ready(never);
    const cReady = c.ready(never);
    a.observe(apiError);
    a.release();
    expect(await settled(bReady)).toBe("resolved");
    expect(await settled(cReady)).toBe("pending");
    b.observe(messageStart(usage(2_000, 18_000)));
    expect(await settled(cReady)).toBe("resolved");
  });

  it("gives up waiting when its signal aborts, with the signal's reason", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const [a, b] = [stagger.join("g"), stagger.join("g")];
    await a.ready(never);
    const stop = new AbortController();
    const waiting = b.ready(stop.signal);
    stop.abort(new Error("task cancelled"));
    await expect(waiting).rejects.toThrow("task cancelled");
  });

  it("keeps a group warm for 5 minutes after a response began, 1 hour after a 1-hour write", async () => {
    let now = 0;
    const stagger = new CacheStagger({ maxWaitMs: 60_000, now: () => now });
    const leader = stagger.join("five");
    await leader.ready(never);
    leader.observe(messageStart());
    now += 4 * 60_000;
    expect(stagger.join("five").mayLead).toBe(false);
    now += 60_000 + 1;
    expect(stagger.join("five").mayLead).toBe(true);

    const hourLeader = stagger.join("hour");
    await hourLeader.ready(never);
    hourLeader.observe(messageStart(usage(20_000, 0, 20_000)));
    now += 59 * 60_000;
    expect(stagger.join("hour").mayLead).toBe(false);
  });

  it("stops waiting in a group whose leader's response reports no caching at all", async () => {
    const stagger = new CacheStagger({ maxWaitMs: 60_000 });
    const leader = stagger.join("g");
    await leader.ready(never);
    leader.observe(messageStart(usage(0, 0)));
    const later = stagger.join("g");
    expect(later.mayLead).toBe(false);
    expect(await settled(later.ready(never))).toBe("resolved");
  });
});
