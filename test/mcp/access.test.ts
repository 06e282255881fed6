// cadre mcp without a login (a HOME of its own, no ANTHROPIC_API_KEY), on the real CLI: the first
// spawn_session answers with a tool error that says how to log in, and so does every one after it,
// without starting another child.
import { describe, expect, it } from "vitest";
import { call, claudeDescendants, startStdioCadre, textOf } from "../support/mcp.ts";

describe("cadre mcp without a login", () => {
  it("answers spawn_session with a tool error that says how to log in; the next one starts no child", async () => {
    const { client, pid } = await startStdioCadre(null, ["--warm", "0"]);
    const first = await call(client, "spawn_session", { prompt: "hi", name: "first", wait_s: 40 });
    expect(first.isError, textOf(first)).toBe(true);
    expect(textOf(first)).toMatch(/not logged in.*claude auth login.*ANTHROPIC_API_KEY.*--rehearse` runs offline/);

    const children = await claudeDescendants(pid);
    const second = await call(client, "spawn_session", { prompt: "hi", name: "second", wait_s: 40 });
    expect([second.isError, textOf(second)]).toEqual([true, textOf(first)]);
    // No new child: one of the first call's may have ended in between.
    expect((await claudeDescendants(pid)).filter((child) => !children.includes(child))).toEqual([]);
    const listed = await call(client, "list_sessions");
    expect(JSON.stringify(listed.structuredContent)).not.toContain("second");
  });
});
