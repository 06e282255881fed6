// What "/clear" resets in a live claude process, and what it keeps, on the pinned CLI.
// Process reuse (src/orchestrator/reuse-verdict.ts) relies on these facts.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { PermissionDecision } from "../../src/worker/index.ts";
import { resetConversation } from "../../src/worker/index.ts";
import { startClaude } from "../support/claude.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { conversationText, toolResults } from "../support/requests.ts";
import { startRehearsedWorker } from "../support/worker.ts";

const bash = (command: string, extra: Record<string, unknown> = {}) => ({
  tool_use: { name: "Bash", input: { command, description: "test", ...extra } },
});

describe("resetting a worker's conversation with /clear", () => {
  it("starts a new session with none of the old conversation, at no cost, and the next turn's cost starts over", async () => {
    const server = await createRehearsal({ s: [{ text: "first answer SECRET-ANSWER" }] });
    const { worker, cwd } = await startRehearsedWorker(server, "s");
    const first = await worker.run("first prompt SECRET-PROMPT");
    const before = server.requests.length;

    const reset = await resetConversation(worker);
    expect(server.requests.length, "/clear asks the model nothing").toBe(before);
    expect(reset.init.session_id).not.toBe(first.sessionId);
    expect(worker.sessionId).toBe(reset.init.session_id);
    expect(reset.init.cwd).toBe(cwd);
    expect(reset.result.num_turns).toBe(0);
    expect(reset.result.total_cost_usd).toBe(0);
    expect(reset.backgroundTasks).toEqual([]);
    expect(reset.messages.map((m) => m.type)).toContain("conversation_reset");

    server.setScript("s", [{ text: "second answer" }]);
    const second = await worker.run("second prompt");
    expect(second.sessionId).toBe(reset.init.session_id);
    const request = server.requests.at(-1)!;
    expect(request.sessionId).toBe(reset.init.session_id);
    const seen = conversationText(request);
    expect(seen).toContain("second prompt");
    expect(seen).not.toMatch(/SECRET|first prompt|first answer/);
    // The one trace /clear leaves: its own record before the next prompt.
    expect(seen).toContain("<command-name>/clear</command-name>");
    // total_cost_usd counts per session: the second turn's is its own, not a running total over the process.
    expect(second.costUsd).toBeLessThan(first.costUsd * 1.5);
    expect(second.costUsd).toBeGreaterThan(0);
  });

  it("keeps permission rules and a permission mode granted for the session", async () => {
    const server = await createRehearsal({ s: [bash("touch granted.txt"), { text: "done" }] });
    const asked: string[] = [];
    const grant: PermissionDecision = {
      behavior: "allow",
      updatedPermissions: [
        { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "touch:*" }], behavior: "allow", destination: "session" },
        { type: "setMode", mode: "acceptEdits", destination: "session" },
      ],
    };
    const { worker } = await startRehearsedWorker(server, "s", {
      canUseTool: (request) => {
        asked.push(String(request.input.command ?? request.toolName));
        return asked.length === 1 ? grant : { behavior: "allow" };
      },
    });
    expect(worker.session).toBeUndefined();
    await worker.run("go");
    expect(asked).toEqual(["touch granted.txt"]);

    const reset = await resetConversation(worker);
    expect(reset.init.permissionMode, "the mode granted for the session survives /clear").toBe("acceptEdits");
    server.setScript("s", [bash("touch again.txt"), { text: "done" }]);
    await worker.run("go again");
    expect(asked, "the rule granted for the session survives /clear: no question this time").toEqual(["touch granted.txt"]);
  });

  it("leaves a background shell running, and lists it", async () => {
    // A Worker's turn lasts until its background work ends, so it never sends /clear over a running shell:
    // the fact that the reuse check still guards against is measured on the CLI itself.
    const server = await createRehearsal({ s: [bash("sleep 300", { run_in_background: true }), { text: "started" }] });
    const claude = await startClaude({ baseUrl: server.baseUrlFor("s"), args: ["--allowedTools", "Bash"] });
    await claude.initialize();
    claude.sendUser("go");
    await claude.untilResult();
    claude.sendUser("/clear");
    const { messages } = await claude.untilResult();
    const changed = messages.filter((line) => line.subtype === "background_tasks_changed").at(-1) as unknown as { tasks: { task_type: string }[] };
    expect(changed.tasks).toHaveLength(1);
    expect(changed.tasks[0]!.task_type).toBe("local_bash");
  });

  it("puts the shell back in the starting directory; the CLI has no todo list in this mode", async () => {
    const server = await createRehearsal({ s: [bash("cd sub && pwd"), { text: "moved" }] });
    const { worker, cwd } = await startRehearsedWorker(server, "s", { canUseTool: () => ({ behavior: "allow" }) });
    await mkdir(join(cwd, "sub"));
    await worker.run("go");
    expect(toolResults(server.requests.at(-1))).toEqual([join(cwd, "sub")]);
    expect(worker.session?.tools).not.toContain("TodoWrite");

    const reset = await resetConversation(worker);
    expect(reset.init.cwd).toBe(cwd);
    server.setScript("s", [bash("pwd"), { text: "here" }]);
    await worker.run("where?");
    expect(toolResults(server.requests.at(-1))).toEqual([cwd]);
  });
});
