// tell_peer and read_inbox between two hosts: each host's orchestrator keeps its inboxes in Redis.
import { describe, expect, it, onTestFinished } from "vitest";
import { RedisInbox } from "../../src/distributed/inbox.ts";
import { runKeys } from "../../src/distributed/keys.ts";
import { startRedis } from "../support/distributed.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

describe("peer messages across hosts", () => {
  it("a worker on one host tells a peer; the peer's worker on another host reads it, once", async () => {
    const redis = await startRedis();
    const keys = runKeys("peers-1");
    const model = await createRehearsal({
      writer: [
        { tool_use: { name: "mcp__cadre__tell_peer", input: { peer: "reader", message: "hello across hosts" } } },
        { text: "told: {{tool_result}}" },
      ],
      reader: [{ tool_use: { name: "mcp__cadre__read_inbox", input: {} } }, { text: "inbox: {{tool_result}}" }],
    });
    const agents = {
      writer: { description: "Writes notes", prompt: "You write notes." },
      reader: { description: "Reads notes", prompt: "You read notes." },
    };
    const host = async () => {
      const connection = redis.client.duplicate();
      onTestFinished(() => connection.disconnect());
      return (
        await rehearsedOrchestrator(model, { agents, inbox: new RedisInbox(connection, keys), script: (context) => context.agent ?? context.name })
      ).orchestrator;
    };
    const [one, two] = [await host(), await host()];

    const told = await one.run({ name: "tell", agent: "writer", prompt: "tell the reader" });
    expect(told.status, told.error?.message).toBe("succeeded");
    expect(told.text).toBe(`told: {"delivered":true}`);
    expect(await redis.client.llen(keys.inbox("reader"))).toBe(1);

    const read = await two.run({ name: "read", agent: "reader", prompt: "read your inbox" });
    expect(read.status, read.error?.message).toBe("succeeded");
    // The model gets the tool's structured content.
    expect(JSON.parse(read.text.replace(/^inbox: /, ""))).toMatchObject({ messages: [{ from: "writer", text: "hello across hosts" }] });
    expect(await redis.client.llen(keys.inbox("reader"))).toBe(0);
  }, 60_000);
});
