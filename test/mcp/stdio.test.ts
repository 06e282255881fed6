// `cadre mcp` over stdio with the SDK's own Client: every tool on real claude children, scripted offline.
import { describe, expect, it } from "vitest";
import { call, claudeDescendants, startStdioCadre, textOf } from "../support/mcp.ts";
import { isGone } from "../support/processes.ts";

const SCRIPTS = {
  alpha: [{ text: "alpha heard: {{prompt}}" }, { text: "alpha again: {{prompt}}" }],
  beta: [
    { text: "beta done", delay_ms: 1_500 },
    { text: "never finished", delay_ms: 30_000 },
  ],
  gamma: [{ text: "gamma done", delay_ms: 500 }],
};

describe("cadre mcp over stdio", () => {
  it("spawns, follows up, waits, interrupts, closes, and refuses bad calls without dying", async () => {
    const { client, pid } = await startStdioCadre(SCRIPTS, ["--max-sessions", "3"]);

    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "answer_permission",
        "background_tasks",
        "close_session",
        "get_context_usage",
        "get_session",
        "get_task_output",
        "get_transcript",
        "get_usage",
        "get_workflow",
        "interrupt_session",
        "list_background_tasks",
        "list_sessions",
        "query_session",
        "rename_session",
        "rewind_session_files",
        "run_workflow",
        "set_permission_mode",
        "spawn_session",
        "steer_workflow_agent",
        "stop_background_task",
        "wait_sessions",
      ].sort(),
    );
    expect(tools.every((t) => t.outputSchema !== undefined)).toBe(true);
    // No agents configured: spawn_session does not offer the field.
    expect(Object.keys(tools.find((t) => t.name === "spawn_session")!.inputSchema.properties ?? {})).not.toContain("agent");

    // spawn → the first turn's result
    const spawned = await call(client, "spawn_session", { prompt: "hello alpha", name: "alpha" });
    expect(spawned.isError).toBeFalsy();
    expect(spawned.structuredContent).toMatchObject({ name: "alpha", status: "idle", turns: 1, result: "alpha heard: hello alpha" });
    expect(spawned.structuredContent!.cost_usd).toBeGreaterThan(0);
    expect(textOf(spawned)).toContain("alpha heard: hello alpha");
    const alpha = spawned.structuredContent!.session_id as string;

    // a follow-up in the same child, addressed by name
    const followUp = await call(client, "query_session", { session_id: "alpha", prompt: "once more" });
    expect(followUp.structuredContent).toMatchObject({ session_id: alpha, status: "idle", turns: 2, result: "alpha again: once more" });

    // two more without waiting, then wait on all three with progress notifications
    const beta = await call(client, "spawn_session", { prompt: "go", name: "beta", wait_s: 0 });
    const gamma = await call(client, "spawn_session", { prompt: "go", name: "gamma", wait_s: 0 });
    expect(beta.structuredContent!.status).not.toBe("idle");
    expect(gamma.structuredContent!.status).not.toBe("idle");
    const progress: string[] = [];
    const waited = await call(
      client,
      "wait_sessions",
      { session_ids: [alpha, "beta", "gamma"], mode: "all", timeout_s: 40 },
      { onprogress: (p) => progress.push(p.message ?? "") },
    );
    expect(waited.structuredContent!.done).toBe(true);
    expect(waited.structuredContent!.settled).toHaveLength(3);
    expect((waited.structuredContent!.sessions as { result: string }[]).map((s) => s.result)).toEqual([
      "alpha again: once more",
      "beta done",
      "gamma done",
    ]);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatch(/of 3 sessions/);

    // the limit: three live sessions, a fourth is refused before any process starts
    const fourth = await call(client, "spawn_session", { prompt: "one too many" });
    expect(fourth.isError).toBe(true);
    expect(textOf(fourth)).toMatch(/close_session/);

    // interrupt a long turn: the session ends the turn and stays usable
    const long = await call(client, "query_session", { session_id: "beta", prompt: "take forever", wait_s: 1 });
    expect(long.structuredContent!.status).toBe("running");
    const started = Date.now();
    const interrupted = await call(client, "interrupt_session", { session_id: "beta" });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(interrupted.structuredContent!.status).toBe("idle");
    expect(interrupted.structuredContent!.turns).toBe(2);

    // close: the child process goes; the session stays visible as closed
    const gammaPids = await claudeDescendants(pid);
    const closed = await call(client, "close_session", { session_id: "gamma" });
    expect(closed.structuredContent!.status).toBe("closed");
    const after = await claudeDescendants(pid);
    const gone = gammaPids.filter((p) => !after.includes(p));
    expect(gone).toHaveLength(1);
    expect(await isGone(gone[0]!)).toBe(true);
    const again = await call(client, "query_session", { session_id: "gamma", prompt: "are you there?" });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/closed.*spawn_session/);

    // an unknown id, and bad arguments: tool errors a model can act on
    const unknown = await call(client, "get_session", { session_id: "nope" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('No session "nope"');
    expect(textOf(unknown)).toContain(alpha);
    const bad = await call(client, "spawn_session", { wait_s: 999 });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/prompt/);
    expect(textOf(bad)).toMatch(/wait_s/);
    const busyAnswer = await call(client, "answer_permission", { session_id: alpha, request_id: "r9", decision: "allow" });
    expect(busyAnswer.isError).toBe(true);
    expect(textOf(busyAnswer)).toMatch(/no waiting request/);

    // …and the server goes on serving
    const listed = await call(client, "list_sessions", { status: ["idle"] });
    expect((listed.structuredContent!.sessions as { name: string }[]).map((s) => s.name).sort()).toEqual(["alpha", "beta"]);
    expect(listed.structuredContent!.live).toBe(2);

    // the transcript, in bounded pages and as a resource
    const page = await call(client, "get_transcript", { session_id: alpha, limit: 3 });
    expect(page.structuredContent!.entries).toHaveLength(3);
    expect(page.structuredContent!.more).toBe(true);
    const rest = await call(client, "get_transcript", { session_id: alpha, after: page.structuredContent!.next, limit: 200 });
    const texts = (rest.structuredContent!.entries as { text: string }[]).map((e) => e.text).join("\n");
    expect(texts).toContain("alpha again: once more");
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain("cadre://sessions/{id}/transcript");
    const resource = await client.readResource({ uri: `cadre://sessions/${alpha}/transcript` });
    expect((resource.contents[0] as { text: string }).text).toContain("alpha heard: hello alpha");
    const list = await client.readResource({ uri: "cadre://sessions" });
    expect(JSON.parse((list.contents[0] as { text: string }).text).map((s: { name: string }) => s.name)).toEqual(["alpha", "beta", "gamma"]);
    // A session that does not exist: MCP's "resource not found", not an internal error.
    const missing = await client.readResource({ uri: "cadre://sessions/nope/transcript" }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: -32002, message: expect.stringContaining("No session") });
  });
});
