// The peer tools as the real claude CLI sees them: a Worker with the "cadre" server, scripted to ask peers.
import { describe, expect, it } from "vitest";
import type { Caller } from "../../../src/orchestrator/peers/directory.ts";
import { createPeerServer, PEER_SERVER_NAME, PEER_TOOL_IDS } from "../../../src/orchestrator/peers/peer-server.ts";
import { DirectoryDouble } from "../../support/peer-directory.ts";
import { createRehearsal } from "../../support/rehearsal.ts";
import { requestsOf } from "../../support/requests.ts";
import { startRehearsedWorker } from "../../support/worker.ts";

type ToolResultBlock = { type?: string; tool_use_id?: string; content?: unknown; is_error?: boolean };

describe("peer server on the real CLI", () => {
  it("the model asks peer B through mcp__cadre__ask_peer and answers with B's reply; a cycle comes back as a tool error", async () => {
    const directory = new DirectoryDouble([
      { name: "A", description: "asks", status: "busy" },
      { name: "B", description: "knows the answer", status: "idle" },
      { name: "C", description: "waits on A", status: "busy" },
    ]);
    directory.answer = async () => "B says 42";
    // C is waiting on A's turn, so A asking C would never end.
    const caller: Caller = { name: "A", waitChain: ["C"] };
    const rehearsal = await createRehearsal({
      ask: [
        {
          tool_uses: [
            { id: "ask_b", name: "mcp__cadre__ask_peer", input: { peer: "B", question: "?" } },
            { id: "ask_c", name: "mcp__cadre__ask_peer", input: { peer: "C", question: "?" } },
          ],
        },
        { text: "Final: {{tool_result}}" },
      ],
    });
    const { worker } = await startRehearsedWorker(rehearsal, "ask", {
      sdkMcpServers: { [PEER_SERVER_NAME]: createPeerServer(() => caller, directory) },
      // Pre-allowed: no permission request reaches the worker (its default policy would deny one).
      allowedTools: PEER_TOOL_IDS,
    });
    const result = await worker.run("what does B say?");
    expect(result.text).toContain("B says 42");
    expect(directory.asks.map((a) => [a.caller.name, a.peer, a.question])).toEqual([["A", "B", "?"]]);

    const requests = requestsOf(rehearsal.requests, "ask");
    expect(requests[0]?.tools).toEqual(expect.arrayContaining(PEER_TOOL_IDS));
    const blocks = requests.at(-1)?.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as ToolResultBlock[]) : []));
    const byId = new Map(blocks?.filter((b) => b.type === "tool_result").map((b) => [b.tool_use_id, b]));
    // The CLI hands the model the structuredContent as JSON (the text rendering is not used).
    expect(byId.get("ask_b")).toMatchObject({ content: JSON.stringify({ peer: "B", answer: "B says 42" }) });
    expect(byId.get("ask_b")?.is_error).toBeFalsy();
    expect(byId.get("ask_c")).toMatchObject({ is_error: true });
    expect(JSON.stringify(byId.get("ask_c")?.content)).toContain("cycle: C → A → C: C is waiting on you; answer from what you know instead");
  });
});
