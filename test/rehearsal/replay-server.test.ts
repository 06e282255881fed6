// The scripted model serving a replay, over plain fetch: recorded replies played as given, and each replayed
// conversation holding one recorded conversation of its name, told apart by the CLI's session id.
import { describe, expect, it, onTestFinished } from "vitest";
import { seen } from "../../src/protocol/index.ts";
import { startRehearsalServer } from "../../src/rehearsal/server.ts";

async function replayServer() {
  const step = (prompt: string, text: string) => ({ content: [{ type: "text", text }], expect: { prompt: seen(prompt), tool_results: [] } });
  // Two children spawned under one name, with different prompts: "child" and "child (2)".
  const server = await startRehearsalServer({
    replay: true,
    scripts: { child: [step("fix a", "fixed a")], "child (2)": [step("fix b", "fixed b")] },
  });
  onTestFinished(() => server.close());
  return server;
}

async function ask(url: string, prompt: string, session: string) {
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-claude-code-session-id": session },
    body: JSON.stringify({
      model: "m",
      max_tokens: 100,
      system: "You are a test.",
      messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
    }),
  });
  const json = (await response.json()) as { content?: { text: string }[]; error?: { message: string } };
  return { status: response.status, text: json.content?.[0]?.text, error: json.error?.message };
}

describe("a replay's scripted model", () => {
  it("gives each conversation the recorded one of its name that expects what it brings, and keeps it", async () => {
    const server = await replayServer();
    // The second child asks first: it still gets its own conversation.
    expect(await ask(server.baseUrlFor("child"), "fix b", "s-b")).toEqual({ status: 200, text: "fixed b", error: undefined });
    expect(await ask(server.baseUrlFor("child"), "fix a", "s-a")).toEqual({ status: 200, text: "fixed a", error: undefined });
    // The same session asks again (the CLI resends): the same conversation.
    expect(await ask(server.baseUrlFor("child"), "fix b", "s-b")).toMatchObject({ text: "fixed b" });
    expect(server.divergences).toEqual([]);
  });

  it("a conversation more than the record has diverges as one it never had", async () => {
    const server = await replayServer();
    await ask(server.baseUrlFor("child"), "fix a", "s-a");
    await ask(server.baseUrlFor("child"), "fix b", "s-b");
    const third = await ask(server.baseUrlFor("child"), "fix c", "s-c");
    expect(third.status).toBe(400);
    expect(third.error).toContain("replay diverged: child (3), turn 0: the record has no session of this name");
    expect(server.divergences).toEqual([expect.objectContaining({ script: "child (3)", step: 0, kind: "no_record", got: "fix c" })]);
  });
});
