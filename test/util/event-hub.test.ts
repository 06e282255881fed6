import process from "node:process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EventHub } from "../../src/util/event-hub.ts";
import { collect } from "../support/streams.ts";

describe("EventHub", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("delivers to every listener in order, and not after unsubscribing", () => {
    const hub = new EventHub<number>();
    const seen: string[] = [];
    const offA = hub.on((n) => seen.push(`a${n}`));
    hub.on((n) => seen.push(`b${n}`));
    hub.emit(1);
    offA();
    hub.emit(2);
    expect(seen).toEqual(["a1", "b1", "b2"]);
  });

  it("skips a listener another one unsubscribes during the same emit", () => {
    const hub = new EventHub<number>();
    const seen: string[] = [];
    hub.on(() => offB());
    const offB = hub.on(() => seen.push("b"));
    hub.emit(1);
    expect(seen).toEqual([]);
  });

  it("keeps delivering past a listener that throws, and emit returns normally", () => {
    const hub = new EventHub<number>();
    const seen: number[] = [];
    hub.on(() => {
      throw new Error("listener bug");
    });
    hub.on((n) => seen.push(n));
    expect(() => hub.emit(1)).not.toThrow();
    hub.emit(2);
    expect(seen).toEqual([1, 2]);
  });

  it("reports a throwing listener on stderr once, and only with CADRE_DEBUG=1", () => {
    const write = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const hub = new EventHub<number>();
    hub.on(() => {
      throw new Error("listener bug");
    });
    hub.emit(1);
    expect(write).not.toHaveBeenCalled();

    vi.stubEnv("CADRE_DEBUG", "1");
    hub.emit(2);
    hub.emit(3);
    expect(write).toHaveBeenCalledTimes(1);
    expect(String(write.mock.calls[0]?.[0])).toMatch(/an event listener threw.*listener bug/);
  });

  it("streams events until the signal aborts", async () => {
    const hub = new EventHub<number>();
    const stop = new AbortController();
    const stream = hub.stream({ signal: stop.signal });
    hub.emit(1);
    hub.emit(2);
    stop.abort();
    hub.emit(3);
    expect(await collect(stream)).toEqual([1, 2]);
  });

  it("ends a stream at once when its signal is already aborted", async () => {
    const hub = new EventHub<number>();
    const stream = hub.stream({ signal: AbortSignal.abort() });
    hub.emit(1);
    expect(await collect(stream)).toEqual([]);
  });

  it("ends a stream after the event endAfter accepts, that event included", async () => {
    const hub = new EventHub<number>();
    const stream = hub.stream({ endAfter: (n) => n === 2 });
    for (const n of [1, 2, 3]) hub.emit(n);
    expect(await collect(stream)).toEqual([1, 2]);
  });

  it("endStreams() ends every open stream after what it buffered", async () => {
    const hub = new EventHub<string>();
    const first = hub.stream();
    const second = hub.stream();
    hub.emit("x");
    hub.endStreams();
    hub.emit("y");
    expect(await Promise.all([collect(first), collect(second)])).toEqual([["x"], ["x"]]);
  });
});
