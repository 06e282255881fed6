// The record of a run on the real CLI: every worker session (tasks, ask_peer's peers, hook
// supervisors, spawn_worker's children) has a transcript and an entry, and the run's cost is
// the sum of what is listed.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent, TaskResult } from "../../src/orchestrator/index.ts";
import { decodeTranscript } from "../support/cli.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";

const AGENTS = {
  critic: { description: "judges plans", prompt: "You are the critic." },
  guard: { description: "decides shell commands", prompt: "Answer ALLOW or DENY." },
};

describe("the record of a run", () => {
  it("peers, supervisors and spawned children each get a transcript and a session record; the totals are their sum", async () => {
    const server = await createRehearsal({
      lead: [
        { tool_use: { id: "toolu_ask", name: "mcp__cadre__ask_peer", input: { peer: "critic", question: "Sound?" } } },
        { tool_use: { id: "toolu_bash", name: "Bash", input: { command: "echo checked", description: "check" } } },
        { tool_use: { id: "toolu_spawn", name: "mcp__cadre__spawn_worker", input: { prompt: "count the widgets" } } },
        { text: "all done" },
      ],
      "peer-critic": [{ text: "sound enough" }],
      "supervisor-guard": [{ text: "ALLOW harmless" }],
      "lead/child": [{ text: "7 widgets" }],
    });
    const outDir = join(await tempHome("cadre-records-"), "transcripts");
    const { orchestrator } = await rehearsedOrchestrator(server, {
      agents: AGENTS,
      outDir,
      hooks: { PreToolUse: [{ matcher: "Bash", supervisor: "guard" }] },
    });
    const lead = await orchestrator.run({ name: "lead", prompt: "plan, check, count" });
    expect(lead.status, lead.error?.message).toBe("succeeded");
    expect(server.warnings).toEqual([]);

    const records = orchestrator.sessionRecords;
    expect(records.map((r) => [r.role, r.name, r.agent, r.parent]).sort()).toEqual([
      ["child", "lead/child", undefined, "lead"],
      ["peer", "peer:critic", "critic", "lead"],
      ["supervisor", "supervisor:guard", "guard", "lead"],
    ]);
    await orchestrator.close();
    for (const record of records) {
      expect(record.sessionId, record.name).toMatch(/^[0-9a-f-]{36}$/);
      expect(record.costUsd, record.name).toBeGreaterThan(0);
      expect(record.numTurns, record.name).toBeGreaterThan(0);
      const transcript = orchestrator.transcriptPaths.get(record.id);
      expect(transcript && existsSync(transcript), record.name).toBe(true);
      const messages = await decodeTranscript(transcript!);
      expect(messages.some((m) => m.type === "result" && m.session_id === record.sessionId)).toBe(true);
    }
    expect(records.find((r) => r.role === "child")?.status).toBe("succeeded");
    // A task's cost is its own worker's; its child is listed apart, so nothing counts twice.
    const listed = lead.costUsd + records.reduce((sum, r) => sum + r.costUsd, 0);
    expect(orchestrator.totals.costUsd).toBeCloseTo(listed, 10);
    const listedTokens = lead.usage.outputTokens + records.reduce((sum, r) => sum + r.usage.outputTokens, 0);
    expect(orchestrator.totals.usage.outputTokens).toBe(listedTokens);
    // Four claude processes, one after another: room for a loaded machine.
  }, 120_000);

  it("a failed task keeps the session id of its last attempt", async () => {
    const server = await createRehearsal({ broken: [{ text: "never", fail: { status: 400, times: 3, message: "scripted outage" } }] });
    const { orchestrator } = await rehearsedOrchestrator(server);
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const result: TaskResult = await orchestrator.run({ name: "broken", prompt: "hi", retries: 0 });
    expect(result.status).toBe("failed");
    const init = events.find((e) => e.type === "task_message" && e.message.type === "system" && e.message.subtype === "init");
    const sessionId = init?.type === "task_message" && init.message.type === "system" ? init.message.session_id : undefined;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.sessionId).toBe(sessionId);
  });
});
