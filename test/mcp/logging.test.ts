// MCP logging: cadre mcp declares the capability, honours logging/setLevel, and tells its
// client what the children do (started, turn ended, permission asked, failed) as
// notifications/message, on a real SDK client and real claude children.
import { type LoggingMessageNotification, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { call, startStdioCadre } from "../support/mcp.ts";
import { until } from "../support/wait.ts";

const SCRIPTS = {
  asker: [{ tool_use: { name: "Bash", input: { command: "touch asked.txt" } } }, { text: "asker done" }],
  quick: [{ text: "quick done" }],
  // The CLI resends a 400 twice: three make the turn fail.
  broken: [{ text: "never", fail: { status: 400, times: 3, message: "BROKEN-ON-PURPOSE" } }],
};

type Logged = LoggingMessageNotification["params"] & { data: { event: string; name: string; message: string } };

describe("cadre mcp logging", () => {
  it("sends the children's events at their levels, filtered by logging/setLevel", async () => {
    const { client } = await startStdioCadre(SCRIPTS, ["--warm", "0"]);
    const logged: Logged[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params as Logged));
    expect(client.getServerCapabilities()?.logging).toEqual({});
    const of = (name: string) => logged.filter((entry) => entry.data.name === name).map((entry) => [entry.level, entry.data.event]);

    expect(await client.setLoggingLevel("debug")).toEqual({});
    const spawned = await call(client, "spawn_session", { prompt: "run it", name: "asker", wait_s: 40 });
    expect(spawned.structuredContent!.status).toBe("awaiting_permission");
    const permission = await until(() => logged.find((entry) => entry.data.event === "permission_asked"));
    expect([permission.level, permission.logger, permission.data.message]).toEqual([
      "notice",
      "cadre",
      expect.stringContaining("asks permission for Bash"),
    ]);
    const [pending] = spawned.structuredContent!.pending_permissions as { request_id: string }[];
    await call(client, "answer_permission", { session_id: "asker", request_id: pending!.request_id, decision: "allow" });
    await call(client, "wait_sessions", { session_ids: ["asker"], timeout_s: 30 });
    await until(() => (of("asker").some(([, event]) => event === "turn_ended") ? true : undefined));
    expect(of("asker")).toEqual([
      ["info", "started"],
      ["notice", "permission_asked"],
      ["info", "turn_ended"],
    ]);

    // From now on only warnings and worse: a quick child's start and end are not sent, a failing child's failure is.
    expect(await client.setLoggingLevel("warning")).toEqual({});
    await call(client, "spawn_session", { prompt: "hi", name: "quick", wait_s: 30 });
    await call(client, "spawn_session", { prompt: "hi", name: "broken", wait_s: 40 });
    const failure = await until(() => logged.find((entry) => entry.data.name === "broken"), 40_000);
    expect([failure.level, failure.data.event]).toEqual(["error", "turn_failed"]);
    expect(failure.data.message).toContain("its turn failed");
    expect(of("quick")).toEqual([]);
    expect(of("broken")).toEqual([["error", "turn_failed"]]);
  });
});
