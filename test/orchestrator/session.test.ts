// Long-lived sessions on the real CLI: follow-up turns and permissions answered by the caller.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { conversationText, requestsOf, toolResults } from "../support/requests.ts";
import { until } from "../support/wait.ts";

describe("orchestrator sessions", () => {
  it("keeps one process across turns, with the conversation", async () => {
    const server = await createRehearsal({ chat: [{ text: "noted" }, { text: "recall: {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server);
    const session = orchestrator.openSession({ name: "chat" });
    const first = await session.send("the password is OSPREY");
    const pid = session.pid;
    const second = await session.send("what was it?");
    expect(first.text).toBe("noted");
    expect(second.text).toBe("recall: what was it?");
    expect(session.pid).toBe(pid);
    expect(session.turns).toBe(2);
    expect(session.status).toBe("idle");
    expect(conversationText(requestsOf(server.requests, "chat").at(-1))).toContain("OSPREY");
    expect(session.costUsd).toBeGreaterThan(0);
    expect(session.transcript().messages.some((m) => m.type === "result")).toBe(true);
    await session.close();
    expect(session.status).toBe("closed");
  });

  it("'ask' permissions wait for answerPermission; a denied command does not run", async () => {
    const server = await createRehearsal({
      asker: [{ tool_use: { name: "Bash", input: { command: "touch parent-says-no.txt" } } }, { text: "ok: {{tool_result}}" }],
    });
    const { orchestrator, cwd } = await rehearsedOrchestrator(server);
    const session = orchestrator.openSession({ name: "asker", permissions: "ask" });
    const turn = session.send("make the file");
    const pending = await until(() => session.pendingPermissions()[0]);
    expect(session.status).toBe("awaiting_permission");
    expect(pending.toolName).toBe("Bash");
    expect(pending.input.command).toBe("touch parent-says-no.txt");
    // The request really waits: nothing ran yet.
    expect(existsSync(join(cwd, "parent-says-no.txt"))).toBe(false);
    expect(session.answerPermission(pending.requestId, { behavior: "deny", message: "PARENT-DENIED" })).toBe(true);
    await turn;
    expect(existsSync(join(cwd, "parent-says-no.txt"))).toBe(false);
    expect(toolResults(requestsOf(server.requests, "asker").at(-1)).join("")).toContain("PARENT-DENIED");
    expect(session.answerPermission(pending.requestId, { behavior: "allow" })).toBe(false);
  });
});
