// set_permission_mode, get_usage, get_context_usage, rename_session: a parent's requests to a child's CLI, through a real
// MCP client and real claude children.
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, startStdioCadre, textOf } from "../support/mcp.ts";

/** Every line of every session transcript the children's CLI wrote under a folder (the rehearsal's home is in the test's TMPDIR). */
async function transcriptLines(folder: string): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  for (const entry of await readdir(folder, { recursive: true })) {
    if (!entry.endsWith(".jsonl")) continue;
    const text = await readFile(join(folder, entry), "utf8");
    for (const line of text.split("\n")) if (line.trim()) lines.push(JSON.parse(line));
  }
  return lines;
}

describe("a child's process controls", () => {
  it("sets the permission mode, reads usage and context, titles the transcript, and refuses a closed session", async () => {
    const { client, cwd } = await startStdioCadre({ worker: [{ text: "ready" }] });
    const spawned = await call(client, "spawn_session", { prompt: "get ready", name: "worker" });
    expect(spawned.structuredContent).toMatchObject({ status: "idle", turns: 1, permission_mode: "default" });

    const planned = await call(client, "set_permission_mode", { session_id: "worker", mode: "plan" });
    expect(planned.isError).toBeFalsy();
    expect(planned.structuredContent).toMatchObject({ session_id: expect.any(String), permission_mode: "plan" });
    expect(textOf(planned)).toContain("permission mode plan");
    expect((await call(client, "get_session", { session_id: "worker" })).structuredContent).toMatchObject({ permission_mode: "plan" });

    const context = await call(client, "get_context_usage", { session_id: "worker" });
    expect(context.isError).toBeFalsy();
    const usage = context.structuredContent!;
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(usage.max_tokens).toBeGreaterThan(usage.total_tokens);
    expect(usage.categories.length).toBeGreaterThan(0);
    expect(textOf(context)).toContain(`${usage.total_tokens} of ${usage.max_tokens} context tokens`);

    const plan = await call(client, "get_usage", { session_id: "worker" });
    expect(plan.isError).toBeFalsy();
    expect(typeof plan.structuredContent!.rate_limits_available).toBe("boolean");

    const renamed = await call(client, "rename_session", { session_id: "worker", title: "the release notes" });
    expect(renamed.structuredContent).toMatchObject({ title: "the release notes" });
    const titles = (await transcriptLines(join(dirname(cwd), "tmp"))).filter((line) => line.type === "custom-title");
    expect(titles.map((line) => line.customTitle)).toContain("the release notes");

    await call(client, "close_session", { session_id: "worker" });
    const closed = await call(client, "get_context_usage", { session_id: "worker" });
    expect(closed.isError).toBe(true);
    expect(textOf(closed)).toContain("is closed");
    const unknown = await call(client, "rename_session", { session_id: "nobody", title: "x" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('No session "nobody"');
  });
});
