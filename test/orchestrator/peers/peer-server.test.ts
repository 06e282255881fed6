// The "cadre" peer tools over MCP: the SDK's real Client against createPeerServer.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { describe, expect, it, onTestFinished } from "vitest";
import { formatChain } from "../../../src/orchestrator/peers/chain.ts";
import type { Caller } from "../../../src/orchestrator/peers/directory.ts";
import { createPeerServer, PEER_TOOL_IDS, PEER_TOOL_NAMES } from "../../../src/orchestrator/peers/peer-server.ts";
import { DirectoryDouble } from "../../support/peer-directory.ts";

const PEERS = [
  { name: "A", description: "plans", status: "busy" },
  { name: "B", description: "knows the numbers", status: "idle" },
  { name: "C", description: "reviews", status: "not_started" },
];

interface Connected {
  client: Client;
  tools: Tool[];
  call(name: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult>;
}

/** A Client connected to a fresh peer server. listTools first: from then on the Client checks every structuredContent against its tool's outputSchema. */
async function connect(directory: DirectoryDouble, caller: () => Caller): Promise<Connected> {
  const server = createPeerServer(caller, directory);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "peer-server-test", version: "1.0.0" });
  await client.connect(clientSide);
  onTestFinished(async () => {
    await client.close();
    await server.close();
  });
  const { tools } = await client.listTools();
  return {
    client,
    tools,
    call: async (name, args = {}, signal) =>
      (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : undefined)) as CallToolResult,
  };
}

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

const callerB: Caller = { name: "B", waitChain: [] };

describe("formatChain", () => {
  it("appends the next worker, showing only the loop when it closes one", () => {
    expect(formatChain(["A", "B"], "C")).toBe("A → B → C");
    expect(formatChain(["A", "B"], "A")).toBe("A → B → A");
    expect(formatChain(["A", "B", "C"], "B")).toBe("B → C → B");
  });
});

describe("peer server tools", () => {
  it("lists the five tools, each with a description, an input schema and an output schema", async () => {
    const { tools } = await connect(new DirectoryDouble(PEERS), () => callerB);
    expect(tools.map((t) => t.name).sort()).toEqual([...PEER_TOOL_NAMES].sort());
    expect(PEER_TOOL_IDS).toContain("mcp__cadre__ask_peer");
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(20);
      expect(tool.outputSchema?.type, tool.name).toBe("object");
    }
    const ask = tools.find((t) => t.name === "ask_peer");
    expect(ask?.inputSchema.required).toEqual(["peer", "question"]);
    const spawn = tools.find((t) => t.name === "spawn_worker");
    expect(spawn?.inputSchema.required).toEqual(["prompt"]);
  });

  it("every tool's structuredContent matches its listed outputSchema", async () => {
    const directory = new DirectoryDouble(PEERS);
    directory.tell({ name: "A", waitChain: [] }, "B", "heads up");
    const { call, tools } = await connect(directory, () => callerB);
    const validator = new AjvJsonSchemaValidator();
    const args: Record<string, Record<string, unknown>> = {
      list_peers: {},
      ask_peer: { peer: "A", question: "plan?" },
      tell_peer: { peer: "C", message: "fyi" },
      read_inbox: {},
      spawn_worker: { prompt: "count", agent: "C" },
    };
    const expected: Record<string, unknown> = {
      list_peers: { peers: [PEERS[0], PEERS[2]] },
      ask_peer: { peer: "A", answer: "A answers: plan?" },
      tell_peer: { delivered: true },
      read_inbox: { messages: [{ from: "A", text: "heads up", at: Date.UTC(2025, 0, 2, 3, 4, 5) }] },
      spawn_worker: { task_id: "t7", answer: "done: count", cost_usd: 0.0123 },
    };
    for (const tool of tools) {
      // callTool itself throws when structuredContent breaks the cached outputSchema.
      const result = await call(tool.name, args[tool.name]);
      expect(result.isError, `${tool.name}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent, tool.name).toEqual(expected[tool.name]);
      const check = validator.getValidator(tool.outputSchema as never)(result.structuredContent);
      expect(check.valid, `${tool.name}: ${check.errorMessage}`).toBe(true);
      expect(textOf(result).length, tool.name).toBeGreaterThan(0);
    }
    expect(directory.spawns.map((s) => [s.caller.name, s.prompt, s.agent])).toEqual([["B", "count", "C"]]);
    expect(directory.tells.at(-1)).toMatchObject({ caller: { name: "B" }, peer: "C", message: "fyi" });
  });

  it("renders peers and messages as short text too", async () => {
    const directory = new DirectoryDouble(PEERS);
    const { call } = await connect(directory, () => callerB);
    expect(textOf(await call("list_peers"))).toBe("A (busy): plans\nC (not_started): reviews");
    expect(textOf(await call("read_inbox"))).toBe("no new messages");
    directory.tell({ name: "C", waitChain: [] }, "B", "done");
    expect(textOf(await call("read_inbox"))).toBe("[2025-01-02T03:04:05.000Z] C: done");
    expect((await call("read_inbox")).structuredContent).toEqual({ messages: [] });
  });

  it("ask_peer hands the question, the current caller and a live signal to the directory and returns the answer", async () => {
    const directory = new DirectoryDouble(PEERS);
    let caller: Caller = { name: "B", waitChain: ["A"] };
    const { call } = await connect(directory, () => caller);
    const result = await call("ask_peer", { peer: "C", question: "is it right?" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ peer: "C", answer: "C answers: is it right?" });
    expect(textOf(result)).toBe("C answers: is it right?");
    expect(directory.asks).toHaveLength(1);
    expect(directory.asks[0]).toMatchObject({ caller: { name: "B", waitChain: ["A"] }, peer: "C", question: "is it right?" });
    expect(directory.asks[0]?.signal.aborted).toBe(false);
    // The caller is read per call: the wait chain of the next turn applies.
    caller = { name: "B", waitChain: [] };
    await call("ask_peer", { peer: "A", question: "x" });
    expect(directory.asks[1]?.caller.waitChain).toEqual([]);
  });

  it("refuses an unknown peer and lists the ones the caller can reach", async () => {
    const directory = new DirectoryDouble(PEERS);
    const { call } = await connect(directory, () => callerB);
    for (const tool of ["ask_peer", "tell_peer"]) {
      const result = await call(tool, { peer: "Z", question: "?", message: "!" });
      expect(result.isError, tool).toBe(true);
      expect(textOf(result)).toBe('unknown peer "Z". Peers you can reach: A, C.');
    }
    expect(directory.asks).toEqual([]);
    expect(directory.tells).toEqual([]);
  });

  it("refuses a peer the connections do not allow", async () => {
    const directory = new DirectoryDouble(PEERS, { B: ["C"] });
    const { call } = await connect(directory, () => callerB);
    for (const tool of ["ask_peer", "tell_peer"]) {
      const result = await call(tool, { peer: "A", question: "?", message: "!" });
      expect(result.isError, tool).toBe(true);
      expect(textOf(result)).toBe(`"A" exists, but this swarm's connections do not let "B" reach it. Peers you can reach: C.`);
    }
    expect(directory.asks).toEqual([]);
    expect(directory.tells).toEqual([]);
  });

  it("without isPeer, an unknown and an unreachable peer read the same", async () => {
    const directory = new DirectoryDouble(PEERS, { B: [] });
    Object.defineProperty(directory, "isPeer", { value: undefined });
    const { call } = await connect(directory, () => callerB);
    const result = await call("ask_peer", { peer: "A", question: "?" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('no peer "A" you can reach. Peers you can reach: none.');
  });

  it("refuses asking or telling yourself", async () => {
    const directory = new DirectoryDouble(PEERS);
    const { call } = await connect(directory, () => callerB);
    for (const tool of ["ask_peer", "tell_peer"]) {
      const result = await call(tool, { peer: "B", question: "?", message: "!" });
      expect(result.isError, tool).toBe(true);
      expect(textOf(result)).toBe('"B" is you; peers are the other workers (see list_peers)');
    }
    expect(directory.asks).toEqual([]);
  });

  it("refuses a cycle instead of deadlocking, naming the chain", async () => {
    const directory = new DirectoryDouble(PEERS);
    // A waits on B; B asks A.
    const direct = await connect(directory, () => ({ name: "B", waitChain: ["A"] }));
    const result = await direct.call("ask_peer", { peer: "A", question: "?" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe("cycle: A → B → A: A is waiting on you; answer from what you know instead");
    // A waits on B, B on C; C asks B.
    const longer = await connect(directory, () => ({ name: "C", waitChain: ["A", "B"] }));
    expect(textOf(await longer.call("ask_peer", { peer: "B", question: "?" }))).toBe(
      "cycle: B → C → B: B is waiting on you; answer from what you know instead",
    );
    expect(directory.asks).toEqual([]);
    // Telling does not wait, so it may go up the chain.
    expect((await direct.call("tell_peer", { peer: "A", message: "working on it" })).structuredContent).toEqual({ delivered: true });
  });

  it("a failed ask comes back as a tool error the model can read", async () => {
    const directory = new DirectoryDouble(PEERS);
    directory.answer = async () => {
      throw new Error("the budget of $1.00 is spent");
    };
    const { call } = await connect(directory, () => callerB);
    const result = await call("ask_peer", { peer: "C", question: "?" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('ask_peer "C" failed: the budget of $1.00 is spent');
  });

  it("cancelling the tool call aborts the directory's ask", async () => {
    const directory = new DirectoryDouble(PEERS);
    let started!: () => void;
    const asked = new Promise<void>((resolve) => (started = resolve));
    directory.answer = (_peer, _question, signal) =>
      new Promise((_resolve, reject) => {
        started();
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    const { call, client } = await connect(directory, () => callerB);
    const controller = new AbortController();
    const pending = call("ask_peer", { peer: "C", question: "slow?" }, controller.signal);
    await asked;
    const signal = directory.asks[0]?.signal;
    expect(signal?.aborted).toBe(false);
    controller.abort(new Error("the user stopped it"));
    await expect(pending).rejects.toThrow("the user stopped it");
    await expect.poll(() => signal?.aborted).toBe(true);
    // The server is still usable afterwards.
    expect((await client.listTools()).tools).toHaveLength(5);
  });
});
