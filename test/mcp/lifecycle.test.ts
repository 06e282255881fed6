// Limits of `cadre mcp`: idle children are closed. (No child outliving the server, whatever
// stops it: test/reliability/mcp-signals.test.ts.)
import { describe, expect, it } from "vitest";
import { call, claudeDescendants, startStdioCadre } from "../support/mcp.ts";
import { until } from "../support/wait.ts";

describe("cadre mcp lifecycle", () => {
  it("closes a child that stays idle past --idle-timeout-s", async () => {
    const { client, pid } = await startStdioCadre({ napper: [{ text: "awake" }] }, ["--idle-timeout-s", "1", "--warm", "0"]);
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
