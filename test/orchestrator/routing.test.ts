// Routing between workers on the real CLI: peer questions, cycles, connections,
// hooks routed to a supervisor or a shell command, and spawned children.
// Effects are read from outside: the model server's requests and the task's directory.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent, TaskResult } from "../../src/orchestrator/index.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";

const AGENTS = {
  researcher: { description: "finds facts", prompt: "You are the researcher." },
  critic: { description: "judges plans", prompt: "You are the critic." },
};

type ToolResultBlock = { type?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };

/** The tool_result the model received for `toolUseId`, as the CLI sent it. */
function toolResult(server: RehearsalServer, toolUseId: string): ToolResultBlock | undefined {
  for (const request of server.requests) {
    for (const message of request.messages) {
      if (!Array.isArray(message.content)) continue;
      const block = (message.content as ToolResultBlock[]).find((b) => b.type === "tool_result" && b.tool_use_id === toolUseId);
      if (block) return block;
    }
  }
  return undefined;
}

function contentText(block: ToolResultBlock | undefined): string {
  if (!block) return "";
  if (typeof block.content === "string") return block.content;
  return Array.isArray(block.content) ? block.content.map((b: { text?: string }) => b.text ?? "").join("") : "";
}

/** A script that asks `peer` once, then answers with what the tool returned. */
function askScript(peer: string, id: string) {
  return [{ tool_use: { id, name: "mcp__cadre__ask_peer", input: { peer, question: "Is the plan sound?" } } }, { text: "Final: {{tool_result}}" }];
}

/** A script that runs one Bash command, then reports what the tool returned. */
function bashScript(command: string, id: string) {
  return [{ tool_use: { id, name: "Bash", input: { command, description: "run it" } } }, { text: "Final: {{tool_result}}" }];
}

describe("orchestrator routing on the real CLI", () => {
  it("worker A asks worker B through ask_peer and A's answer carries B's", async () => {
    const server = await createRehearsal({
      asker: askScript("critic", "toolu_ask"),
      "peer-critic": [{ text: "critic says: the plan holds up" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, { agents: AGENTS });
    const result = await orchestrator.run({ name: "asker", agent: "researcher", prompt: "check the plan with the critic" });

    expect(result.status, result.error?.message).toBe("succeeded");
    expect(result.text).toContain("critic says: the plan holds up");
    // The CLI hands the model the structuredContent as JSON.
    expect(contentText(toolResult(server, "toolu_ask"))).toBe(JSON.stringify({ peer: "critic", answer: "critic says: the plan holds up" }));
    // B's session was asked once, as the critic agent, with A's question and A named as the asker.
    const asked = requestsOf(server.requests, "peer-critic");
    expect(asked).toHaveLength(1);
    expect(asked[0]!.system).toContain("You are the critic.");
    expect(JSON.stringify(asked[0]!.messages)).toContain("Question from researcher:\\n\\nIs the plan sound?");
    expect(server.warnings).toEqual([]);
  });

  it("a peer asking back its asker gets a cycle error, which reaches A's answer without hanging", async () => {
    const server = await createRehearsal({
      asker: askScript("critic", "toolu_ask"),
      "peer-critic": [...askScript("researcher", "toolu_back").slice(0, 1), { text: "critic heard: {{tool_result}}" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, { agents: AGENTS });
    const started = Date.now();
    const result = await orchestrator.run({ name: "asker", agent: "researcher", prompt: "check the plan", timeoutMs: 60_000 });

    expect(result.status, result.error?.message).toBe("succeeded");
    const back = toolResult(server, "toolu_back");
    expect(back?.is_error).toBe(true);
    expect(contentText(back)).toContain("cycle: researcher → critic → researcher");
    expect(result.text).toContain("critic heard: cycle: researcher → critic → researcher");
    // No researcher peer session was ever started to answer the cycle.
    expect(requestsOf(server.requests, "peer-researcher")).toEqual([]);
    expect(Date.now() - started).toBeLessThan(45_000);
  });

  it("connections that do not allow researcher → critic refuse the question", async () => {
    const server = await createRehearsal({
      asker: askScript("critic", "toolu_ask"),
      "peer-critic": [{ text: "never asked" }],
    });
    // researcher reaches no one, so its workers would start without the peer tools: they are asked for here.
    const { orchestrator } = await rehearsedOrchestrator(server, {
      agents: AGENTS,
      connections: { researcher: [], critic: ["researcher"] },
      peerTools: true,
    });
    const result = await orchestrator.run({ name: "asker", agent: "researcher", prompt: "check the plan" });

    expect(result.status, result.error?.message).toBe("succeeded");
    const refused = toolResult(server, "toolu_ask");
    expect(refused?.is_error).toBe(true);
    expect(contentText(refused)).toContain(`connections do not let "researcher" reach it`);
    expect(result.text).toContain("connections do not let");
    expect(requestsOf(server.requests, "peer-critic")).toEqual([]);
  });

  it("a worker with an agent to reach gets the peer tools; one without starts no peer server", async () => {
    const server = await createRehearsal({ connected: [{ text: "connected done" }], alone: [{ text: "alone done" }] });
    const agents = { ...AGENTS, loner: { description: "works alone", prompt: "You are the loner." } };
    const { orchestrator } = await rehearsedOrchestrator(server, { agents, connections: { researcher: ["critic"] } });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const results = await Promise.all([
      orchestrator.run({ name: "connected", agent: "researcher", prompt: "go" }),
      orchestrator.run({ name: "alone", agent: "loner", prompt: "go" }),
    ]);
    for (const result of results) expect(result.status, result.error?.message).toBe("succeeded");

    // What the CLI offered each model: the peer tools to the connected one only.
    const peerToolsOffered = (script: string) =>
      requestsOf(server.requests, script)[0]!
        .tools.filter((t) => t.startsWith("mcp__cadre__"))
        .sort();
    expect(peerToolsOffered("connected")).toEqual(
      ["ask_peer", "list_peers", "read_inbox", "spawn_worker", "tell_peer"].map((t) => `mcp__cadre__${t}`),
    );
    expect(peerToolsOffered("alone")).toEqual([]);
    // And what each process had connected to: the loner's CLI was never given the server.
    const mcpServers = (name: string) =>
      events.flatMap((e) =>
        e.type === "task_message" && e.task.name === name && e.message.type === "system" && e.message.subtype === "init"
          ? [(e.message as { mcp_servers?: { name: string }[] }).mcp_servers?.map((server) => server.name) ?? []]
          : [],
      )[0];
    expect(mcpServers("connected")).toContain("cadre");
    expect(mcpServers("alone")).toEqual([]);
  });

  it("a PreToolUse hook routed to a supervisor that says DENY stops the Bash call, with its reason", async () => {
    const server = await createRehearsal({
      toucher: bashScript("touch doomed.txt", "toolu_touch"),
      "supervisor-guard": [{ text: "DENY that deletes files" }],
    });
    const { orchestrator, cwd } = await rehearsedOrchestrator(server, {
      agents: { guard: { description: "approves commands", prompt: "You guard the shell." } },
      hooks: { PreToolUse: [{ matcher: "Bash", supervisor: "guard" }] },
      canUseTool: () => ({ behavior: "allow" }),
    });
    const result = await orchestrator.run({ name: "toucher", prompt: "make the file" });

    expect(result.status, result.error?.message).toBe("succeeded");
    expect(existsSync(join(cwd, "doomed.txt"))).toBe(false);
    const denied = toolResult(server, "toolu_touch");
    expect(denied?.is_error).toBe(true);
    expect(contentText(denied)).toContain("supervisor guard: that deletes files");
    // The supervisor was asked about this very command.
    const asked = requestsOf(server.requests, "supervisor-guard");
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0]!.messages)).toContain("touch doomed.txt");
  });

  it("a supervisor that says ALLOW lets the Bash call run", async () => {
    const server = await createRehearsal({
      toucher: bashScript("touch allowed.txt", "toolu_touch"),
      "supervisor-guard": [{ text: "ALLOW fine" }],
    });
    const { orchestrator, cwd } = await rehearsedOrchestrator(server, {
      agents: { guard: { description: "approves commands", prompt: "You guard the shell." } },
      hooks: { PreToolUse: [{ matcher: "Bash", supervisor: "guard" }] },
      canUseTool: () => ({ behavior: "allow" }),
    });
    const result = await orchestrator.run({ name: "toucher", prompt: "make the file" });

    expect(result.status, result.error?.message).toBe("succeeded");
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);
    expect(toolResult(server, "toolu_touch")?.is_error).toBeFalsy();
    expect(requestsOf(server.requests, "supervisor-guard")).toHaveLength(1);
  });

  it("a shell-command hook that exits 2 blocks the call and the model reads its stderr", async () => {
    const server = await createRehearsal({ toucher: bashScript("touch blocked.txt", "toolu_touch") });
    const events: OrchestratorEvent[] = [];
    const { orchestrator, cwd } = await rehearsedOrchestrator(server, {
      hooks: { PreToolUse: [{ matcher: "Bash", command: "echo 'blocked by policy script' >&2; exit 2" }] },
      canUseTool: () => ({ behavior: "allow" }),
    });
    orchestrator.on((e) => events.push(e));
    const result = await orchestrator.run({ name: "toucher", prompt: "make the file" });

    expect(result.status, result.error?.message).toBe("succeeded");
    expect(existsSync(join(cwd, "blocked.txt"))).toBe(false);
    const blocked = toolResult(server, "toolu_touch");
    expect(blocked?.is_error).toBe(true);
    expect(contentText(blocked)).toContain("blocked by policy script");
    expect(result.text).toContain("blocked by policy script");
    // A deliberate block, not a failing hook.
    expect(events.filter((e) => e.type === "hook_failed")).toEqual([]);
  });

  it("spawn_worker runs a child task whose answer and cost reach the parent", async () => {
    const server = await createRehearsal({
      parent: [
        { tool_use: { id: "toolu_spawn", name: "mcp__cadre__spawn_worker", input: { prompt: "count the widgets" } } },
        { text: "Parent got: {{tool_result}}" },
      ],
      // spawnChild names the child "<parent>/child"; its script is that name.
      "parent/child": [{ text: "child counted 7 widgets for: {{prompt}}" }],
    });
    const events: OrchestratorEvent[] = [];
    // No agents here, so the peer tools are asked for explicitly.
    const { orchestrator } = await rehearsedOrchestrator(server, { peerTools: true });
    orchestrator.on((e) => events.push(e));
    const parent = await orchestrator.run({ name: "parent", prompt: "delegate the count" });

    expect(parent.status, parent.error?.message).toBe("succeeded");
    expect(server.warnings).toEqual([]);
    expect(requestsOf(server.requests, "parent/child")).toHaveLength(1);
    expect(parent.text).toContain("child counted 7 widgets for: count the widgets");

    const child = events.flatMap((e) => (e.type === "task_finished" && e.task.parentId === parent.id ? [e.result] : []))[0] as TaskResult | undefined;
    expect(child?.status).toBe("succeeded");
    expect(child!.costUsd).toBeGreaterThan(0);
    // The parent's cost is what its own process reported; the child's is the child's, listed apart (sessionRecords).
    const ownCost = events
      .flatMap((e) => (e.type === "task_message" && e.task.id === parent.id && e.message.type === "result" ? [e.message.total_cost_usd ?? 0] : []))
      .reduce((a, b) => a + b, 0);
    expect(ownCost).toBeGreaterThan(0);
    expect(parent.costUsd).toBeCloseTo(ownCost, 10);
    expect(orchestrator.sessionRecords).toEqual([expect.objectContaining({ role: "child", parent: "parent", costUsd: child!.costUsd })]);
    expect(orchestrator.totals.costUsd).toBeCloseTo(parent.costUsd + child!.costUsd, 10);
  });
});
