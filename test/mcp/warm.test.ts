// `cadre mcp --warm N`: spare children on the real CLI. spawn_session takes one and a replacement
// starts; spares are not sessions; none outlives the server, whether its client goes or it gets SIGTERM.
import { describe, expect, it } from "vitest";
import { call, claudeDescendants, startStdioCadre, textOf } from "../support/mcp.ts";
import { isGone } from "../support/processes.ts";
import { until } from "../support/wait.ts";

const SCRIPTS = { one: [{ text: "one heard: {{prompt}}" }], two: [{ text: "two heard: {{prompt}}" }] };

describe("cadre mcp --warm", () => {
  it("spawn_session takes the spare, a replacement starts, and spares do not count as sessions", async () => {
    const { client, pid } = await startStdioCadre(SCRIPTS, ["--max-sessions", "1"]);
    const [spare] = await until(async () => {
      const children = await claudeDescendants(pid);
      return children.length === 1 ? children : undefined;
    });

    const spawned = await call(client, "spawn_session", { prompt: "hello", name: "one" });
    expect(spawned.structuredContent).toMatchObject({ status: "idle", result: "one heard: hello" });
    const children = await until(async () => {
      const now = await claudeDescendants(pid);
      return now.length === 2 ? now : undefined;
    });
    expect(children, "the session runs on the spare").toContain(spare);
    const replacement = children.find((child) => child !== spare)!;

    // One session is the limit here; the spare waiting beside it is not a session.
    expect((await call(client, "list_sessions")).structuredContent!.sessions).toHaveLength(1);
    const refused = await call(client, "spawn_session", { prompt: "hello", name: "two" });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/1/);

    await call(client, "close_session", { session_id: "one" });
    expect(await isGone(spare!)).toBe(true);
    const next = await call(client, "spawn_session", { prompt: "again", name: "two" });
    expect(next.structuredContent).toMatchObject({ status: "idle", result: "two heard: again" });
    expect(await claudeDescendants(pid)).toContain(replacement);
  });

  it("a spawn_session with settings of its own starts its own child; SIGTERM ends it and every spare", async () => {
    const { client, pid } = await startStdioCadre(SCRIPTS, ["--warm", "2"]);
    const spares = await until(async () => {
      const children = await claudeDescendants(pid);
      return children.length === 2 ? children : undefined;
    });
    const spawned = await call(client, "spawn_session", { prompt: "hi", name: "one", model: "claude-other-model" });
    expect(spawned.structuredContent).toMatchObject({ status: "idle", result: "one heard: hi" });
    const children = await claudeDescendants(pid);
    expect(children).toHaveLength(3);
    expect(children).toEqual(expect.arrayContaining(spares));

    process.kill(pid, "SIGTERM");
    expect(await isGone(pid, 15_000)).toBe(true);
    for (const child of children) expect(await isGone(child, 5_000), `claude pid ${child} outlived the server`).toBe(true);
  });
});
