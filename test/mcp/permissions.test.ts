// "Ask parent": a child's permission requests wait for the MCP client, answered by tool or by elicitation.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { call, startStdioCadre, textOf } from "../support/mcp.ts";

const QUESTION = "Which database should we use?";

const SCRIPTS = {
  asker: [{ tool_use: { name: "Bash", input: { command: "touch parent-says-no.txt" } } }, { text: "asker got: {{tool_result}}" }],
  "handed-back": [{ tool_use: { name: "Bash", input: { command: "touch handed-back.txt" } } }, { text: "handed-back got: {{tool_result}}" }],
  questioner: [
    {
      tool_use: {
        name: "AskUserQuestion",
        input: {
          questions: [
            {
              question: QUESTION,
              header: "Database",
              multiSelect: false,
              options: [
                { label: "Postgres", description: "relational" },
                { label: "SQLite", description: "embedded" },
              ],
            },
          ],
        },
      },
    },
    { text: "questioner got: {{tool_result}}" },
  ],
  planner: [{ tool_use: { name: "ExitPlanMode", input: {} } }, { text: "planner got: {{tool_result}}" }],
};

describe("cadre mcp permissions", () => {
  it("a child's Bash call waits for answer_permission, and a denied call does not run", async () => {
    const { client, cwd } = await startStdioCadre(SCRIPTS);

    const started = Date.now();
    const spawned = await call(client, "spawn_session", { prompt: "make the file", name: "asker", wait_s: 40 });
    // It returns as soon as the child needs an answer, not after wait_s.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(spawned.structuredContent!.status).toBe("awaiting_permission");
    const [pending] = spawned.structuredContent!.pending_permissions as {
      request_id: string;
      kind: string;
      tool_name: string;
      input: { command: string };
    }[];
    expect(pending).toMatchObject({ kind: "tool", tool_name: "Bash", input: { command: "touch parent-says-no.txt" } });
    expect(textOf(spawned)).toContain("answer_permission");

    // It really waits: nothing ran, and get_session shows the request.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(existsSync(join(cwd, "parent-says-no.txt"))).toBe(false);
    const shown = await call(client, "get_session", { session_id: "asker" });
    expect(shown.structuredContent!.pending_permissions).toHaveLength(1);

    const answered = await call(client, "answer_permission", {
      session_id: "asker",
      request_id: pending!.request_id,
      decision: "deny",
      message: "PARENT-DENIED",
    });
    expect(answered.isError).toBeFalsy();
    const waited = await call(client, "wait_sessions", { session_ids: ["asker"], timeout_s: 30 });
    const [info] = waited.structuredContent!.sessions as { status: string; result: string }[];
    expect(info!.status).toBe("idle");
    expect(info!.result).toContain("PARENT-DENIED");
    expect(existsSync(join(cwd, "parent-says-no.txt"))).toBe(false);
    // The request is gone: answering again is a tool error.
    const twice = await call(client, "answer_permission", { session_id: "asker", request_id: pending!.request_id, decision: "allow" });
    expect(twice.isError).toBe(true);

    // AskUserQuestion reaches the parent the same way; the chosen answer reaches the child.
    const asked = await call(client, "spawn_session", { prompt: "choose", name: "questioner" });
    expect(asked.structuredContent!.status).toBe("awaiting_permission");
    const [question] = asked.structuredContent!.pending_permissions as { request_id: string; kind: string }[];
    expect(question!.kind).toBe("question");
    expect(textOf(asked)).toContain(QUESTION);
    const wrong = await call(client, "answer_permission", { session_id: "questioner", request_id: question!.request_id, decision: "allow" });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toContain(QUESTION);
    await call(client, "answer_permission", {
      session_id: "questioner",
      request_id: question!.request_id,
      decision: "allow",
      answers: { [QUESTION]: "SQLite" },
    });
    const chosen = await call(client, "wait_sessions", { session_ids: ["questioner"] });
    expect((chosen.structuredContent!.sessions as { result: string }[])[0]!.result).toContain("SQLite");

    // ExitPlanMode: the parent reviews the plan; deny with a message asks for a revision.
    const planned = await call(client, "spawn_session", { prompt: "plan it", name: "planner", permission_mode: "plan" });
    expect(planned.structuredContent!.status).toBe("awaiting_permission");
    const [plan] = planned.structuredContent!.pending_permissions as { request_id: string; kind: string }[];
    expect(plan!.kind).toBe("plan");
    // CLI 2.1.330 sends the plan in a plan file, not in the tool input, when the model wrote none.
    expect(textOf(planned)).toContain("approve its plan");
    await call(client, "answer_permission", { session_id: "planner", request_id: plan!.request_id, decision: "deny", message: "ADD-TESTS-FIRST" });
    const revised = await call(client, "wait_sessions", { session_ids: ["planner"] });
    expect((revised.structuredContent!.sessions as { result: string }[])[0]!.result).toContain("ADD-TESTS-FIRST");
  });

  it("asks through MCP elicitation when the client supports it; the parent waits while the user decides", async () => {
    const elicited: string[] = [];
    const shownAsking: unknown[] = [];
    const { client, cwd } = await startStdioCadre(SCRIPTS, [], { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      elicited.push(request.params.message);
      const handedBack = request.params.message.includes("(handed-back)");
      // The user decides once the server shows the request as theirs: the parent's spawn_session must not return
      // "awaiting_permission" meanwhile.
      const shown = await call(client, "get_session", { session_id: handedBack ? "handed-back" : "asker" });
      shownAsking.push(shown.structuredContent!.pending_permissions);
      if (handedBack) return { action: "cancel" };
      return { action: "accept", content: { decision: "deny", message: "USER-SAID-NO" } };
    });
    const spawned = await call(client, "spawn_session", { prompt: "make the file", name: "asker", wait_s: 55 }, { timeout: 120_000 });
    // Answered by the user: the turn ends without the parent model's help.
    expect(spawned.structuredContent).toMatchObject({ status: "idle", result: expect.stringContaining("USER-SAID-NO") });
    expect(elicited).toHaveLength(1);
    expect(elicited[0]).toContain("touch parent-says-no.txt");
    expect(existsSync(join(cwd, "parent-says-no.txt"))).toBe(false);

    // The user dismissed the question: it is the parent's to answer, and no longer marked as asked.
    const handedBack = await call(client, "spawn_session", { prompt: "make the file", name: "handed-back", wait_s: 55 }, { timeout: 120_000 });
    expect(handedBack.structuredContent!.status).toBe("awaiting_permission");
    const [pending] = handedBack.structuredContent!.pending_permissions as { request_id: string; asking_user?: boolean }[];
    expect(pending!.asking_user).toBeUndefined();
    expect(elicited).toHaveLength(2);
    expect(shownAsking).toEqual([[expect.objectContaining({ asking_user: true })], [expect.objectContaining({ asking_user: true })]]);
    await call(client, "answer_permission", {
      session_id: "handed-back",
      request_id: pending!.request_id,
      decision: "deny",
      message: "PARENT-SAID-NO",
    });
    const done = await call(client, "wait_sessions", { session_ids: ["handed-back"], timeout_s: 50 }, { timeout: 120_000 });
    expect((done.structuredContent!.sessions as { result: string }[])[0]!.result).toContain("PARENT-SAID-NO");
  }, 240_000);
});
