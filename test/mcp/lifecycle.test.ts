// Limits and cleanup of `cadre mcp`: idle children are closed, and no child outlives the server.
import { describe, expect, it } from "vitest";
import { isGone } from "../support/processes.ts";
import { call, claudeDescendants, startStdioCadre, until } from "./support.ts";

describe("cadre mcp lifecycle", () => {
  it("SIGTERM to the server leaves no child process", async () => {
    const { client, pid } = await startStdioCadre({
      quick: [{ text: "quick done" }],
      slow: [{ text: "slow done", delay_ms: 60_000 }],
    });
    await call(client, "spawn_session", { prompt: "go", name: "quick" });
    const slow = await call(client, "spawn_session", { prompt: "go", name: "slow", wait_s: 0 });
    expect(slow.structuredContent!.status).not.toBe("idle");
    // Mid-turn: the child is waiting on the model when the signal comes.
    await until(async () => ((await call(client, "get_session", { session_id: "slow" })).structuredContent!.status === "running" ? true : undefined));
    const children = await claudeDescendants(pid);
    expect(children).toHaveLength(2);

    process.kill(pid, "SIGTERM");
    expect(await isGone(pid, 15_000)).toBe(true);
    for (const child of children) expect(await isGone(child, 5_000), `claude pid ${child} outlived the server`).toBe(true);
  });

  it("closes a child that stays idle past --idle-timeout-s", async () => {
    const { client, pid } = await startStdioCadre({ napper: [{ text: "awake" }] }, ["--idle-timeout-s", "1"]);
    const spawned = await call(client, "spawn_session", { prompt: "go", name: "napper" });
    expect(spawned.structuredContent!.status).toBe("idle");
    const closed = await until(async () => {
      const info = (await call(client, "get_session", { session_id: "napper" })).structuredContent!;
      return info.status === "closed" ? info : undefined;
    }, 15_000);
    expect(closed.closed_reason).toMatch(/idle/);
    expect(await claudeDescendants(pid)).toEqual([]);
  });
});
