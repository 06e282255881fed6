// Spare processes (orchestrator.prewarm) on the real CLI: work of matching settings takes a
// spare at once and a replacement starts; other settings start their own; none outlives close().
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { isGone, liveClaudeChildren } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { until } from "../support/wait.ts";

describe("spare processes on the real CLI", () => {
  it("a session takes the spare at once, a replacement starts, and a task can take that one", async () => {
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { script: () => "s" });
    const started: Extract<OrchestratorEvent, { type: "task_started" }>[] = [];
    orchestrator.on((event) => event.type === "task_started" && started.push(event));

    await orchestrator.prewarm({}, 1);
    const [spare] = await liveClaudeChildren();
    expect(spare).toBeDefined();
    expect(server.requests, "a spare asks the model nothing").toHaveLength(0);

    const session = orchestrator.openSession({ name: "child" });
    expect((await session.send("hello")).text).toBe("done hello");
    expect(session.pid).toBe(spare);
    const replacement = await until(async () => (await liveClaudeChildren()).find((pid) => pid !== spare), 20_000, "a replacement spare");

    const task = await orchestrator.run({ name: "task", prompt: "work" });
    expect(task.text).toBe("done work");
    expect(started.map((e) => [e.pid, e.worker])).toEqual([[replacement, "spare"]]);

    await session.close();
    expect(await isGone(spare!)).toBe(true);
    await orchestrator.close();
    expect(await liveClaudeChildren()).toEqual([]);
  });

  it("a spare's first request is the one a new process sends: building its prompt ahead leaves no trace", async () => {
    const server = await createRehearsal({ s: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { script: () => "s" });
    const cold = orchestrator.openSession({ name: "cold" });
    await cold.send("hello");
    await orchestrator.prewarm({}, 1);
    const [spare] = (await liveClaudeChildren()).filter((pid) => pid !== cold.pid);
    expect(server.requests, "a spare asks the model nothing, not even to count tokens").toHaveLength(1);
    const warm = orchestrator.openSession({ name: "warm" });
    await warm.send("hello");
    expect(warm.pid).toBe(spare);

    const [first, second] = server.requests;
    // The system prompt's first line is a billing header that hashes each conversation.
    const withoutHeader = (system: string) => system.replace(/^x-anthropic-billing-header:[^\n]*\n/, "");
    expect(withoutHeader(second!.system)).toBe(withoutHeader(first!.system));
    expect(second!.tools).toEqual(first!.tools);
    expect(second!.messages).toEqual(first!.messages);
    expect(first!.usage!.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second!.usage, "the spare read the prefix the cold process wrote").toMatchObject({
      cache_read_input_tokens: first!.usage!.cache_creation_input_tokens,
    });
  });

  it("a session of other settings starts its own process and leaves the spare waiting", async () => {
    const server = await createRehearsal({ s: [{ text: "done" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { script: () => "s" });
    await orchestrator.prewarm({}, 1);
    const [spare] = await liveClaudeChildren();

    const session = orchestrator.openSession({ name: "other", model: "claude-other-model" });
    await session.send("hello");
    expect(session.pid).not.toBe(spare);
    expect(server.requests.at(-1)!.model).toBe("claude-other-model");
    expect((await liveClaudeChildren()).sort()).toEqual([spare, session.pid].sort());
  });

  it("an agent's spare serves a session of that agent with the session's own permission answers", async () => {
    const server = await createRehearsal({
      s: [{ tool_use: { name: "Bash", input: { command: "touch spare.txt", description: "touch" } } }, { text: "touched" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      script: () => "s",
      agents: { helper: { description: "Helps", prompt: "You are the HELPER agent." } },
    });
    await orchestrator.prewarm("helper", 1);
    const [spare] = await liveClaudeChildren();

    const session = orchestrator.openSession({ name: "helping", agent: "helper", permissions: "ask" });
    const asked = new Promise<string>((resolve) => session.onPermissionRequest((pending) => resolve(pending.requestId)));
    const turn = session.send("go");
    session.answerPermission(await asked, { behavior: "allow" });
    expect((await turn).text).toBe("touched");
    expect(session.pid).toBe(spare);
    expect(server.requests.at(-1)!.system).toContain("You are the HELPER agent.");
  });
});
