// replies.jsonl read back as a replay's scripts, and overrides applied to them: in memory, without a CLI.
import { describe, expect, it } from "vitest";
import { type ScriptedRequest, ScriptRules } from "../../src/rehearsal/scripting.ts";
import { applyOverrides, parseReplayOverrides, ReplayError, readRecordedReplies } from "../../src/run/index.ts";

const lines = (...values: unknown[]) => values.map((value) => JSON.stringify(value)).join("\n");
const seen = (text: string) => ({ digest: `d-${text}`, excerpt: text });

describe("readRecordedReplies", () => {
  it("makes a script per session name: blocks of one reply joined, each reply with the prompt and tool results it answered", () => {
    const recorded = readRecordedReplies(
      lines(
        { replies: 1, run_id: "r1" },
        { name: "write#1", session: "s1", prompt: seen("write it") },
        { name: "write#1", session: "s1", reply: { id: "m1", content: [{ type: "thinking", thinking: "hm", signature: "x" }] } },
        { name: "write#1", session: "s1", reply: { id: "m1", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }] } },
        { name: "write#1", session: "s1", tool_results: [{ id: "t1", ...seen("a.ts") }] },
        { name: "write#1", session: "s1", reply: { id: "m2", content: [{ type: "text", text: "done" }] } },
        // The next round continues the session: its turns follow the first round's.
        { name: "write#2", session: "s1", prompt: seen("again") },
        { name: "write#2", session: "s1", reply: { id: "m3", content: [{ type: "text", text: "done again" }] } },
      ),
    );
    expect(recorded.runId).toBe("r1");
    const session = [
      {
        content: [
          { type: "thinking", thinking: "hm", signature: "x" },
          { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } },
        ],
        expect: { prompt: seen("write it"), tool_results: [] },
      },
      { content: [{ type: "text", text: "done" }], expect: { tool_results: [{ id: "t1", ...seen("a.ts") }] } },
      { content: [{ type: "text", text: "done again" }], expect: { prompt: seen("again"), tool_results: [] } },
    ];
    expect(recorded.conversations).toEqual({ "write#1": [session], "write#2": [session] });
    expect(recorded.subagents).toEqual({});
  });

  it("keeps a name's conversations apart (its subagents, its attempts), and stops at a torn last line", () => {
    const recorded = readRecordedReplies(
      [
        lines(
          { name: "a", session: "s1", reply: { id: "m1", content: [{ type: "tool_use", id: "t1", name: "Agent", input: {} }] } },
          { name: "a", session: "s1", agent: "t1", reply: { id: "m2", content: [{ type: "text", text: "sub" }] } },
          { name: "b", session: "s2", agent: "t2", reply: { id: "m3", content: [{ type: "text", text: "one" }] } },
          { name: "b", session: "s2", agent: "t3", reply: { id: "m4", content: [{ type: "text", text: "two" }] } },
        ),
        '{"name":"a","session":"s1","reply":{"id":"m5","con',
      ].join("\n"),
    );
    const reply = (text: string) => [{ content: [{ type: "text", text }], expect: { tool_results: [] } }];
    expect(recorded.subagents).toEqual({ a: [reply("sub")], b: [reply("one"), reply("two")] });
    // The torn line is not read: a has one reply.
    expect(recorded.conversations.a).toEqual([[expect.objectContaining({ content: [expect.objectContaining({ name: "Agent" })] })]]);
  });
});

describe("a corrupt line of replies.jsonl", () => {
  it("is named by its number, and the replies after it are still read", () => {
    const recorded = readRecordedReplies(
      [
        lines({ replies: 1, run_id: "r1" }, { name: "a", session: "s1", reply: { id: "m1", content: [{ type: "text", text: "a" }] } }),
        "{not json",
        lines(
          { name: "b", session: "s2", reply: { id: "m2", content: [{ type: "text", text: "b" }] } },
          { name: "c", session: "s3", reply: "not a reply" },
          { name: "d", session: "s4", reply: { id: "m3", content: [{ type: "text", text: "d" }] } },
        ),
      ].join("\n"),
    );
    expect(Object.keys(recorded.conversations)).toEqual(["a", "b", "d"]);
    expect(recorded.unreadable).toEqual([
      expect.stringMatching(/^replies\.jsonl line 3 cannot be read: not JSON \(/),
      expect.stringMatching(/^replies\.jsonl line 5 cannot be read: not a line of this file \(reply: /),
    ]);
  });

  it("is named by each divergence of the replay, and warned of", () => {
    const rules = new ScriptRules({ default: [{ text: "one" }] }, true, ["replies.jsonl line 3 cannot be read: not JSON"]);
    const diverged = rules.rule({
      script: "gone",
      side: false,
      sessionId: "s",
      agentId: undefined,
      messages: [{ role: "user", content: "hi" }],
    } as ScriptedRequest);
    expect(JSON.stringify(diverged.answer)).toContain("the record has lines that could not be read: replies.jsonl line 3 cannot be read: not JSON");
    expect(rules.warnings).toEqual(["replies.jsonl line 3 cannot be read: not JSON; the replay serves the replies of the other lines"]);
  });
});

describe("overrides", () => {
  const recorded = readRecordedReplies(
    lines(
      { name: "write#1", session: "s1", reply: { id: "m1", content: [{ type: "text", text: "one" }] } },
      { name: "write#2", session: "s1", reply: { id: "m2", content: [{ type: "text", text: "two" }] } },
      { name: "review#1", session: "s2", prompt: seen("review") },
      { name: "review#1", session: "s2", reply: { id: "m3", content: [{ type: "text", text: "ok" }] } },
    ),
  );

  it("replace a recorded reply (served whatever it is given) and add the turns of a round the record lacks", () => {
    const overrides = parseReplayOverrides("review#1:\n  0: { text: 'no' }\nwrite#3:\n  2: { text: 'three' }\n", "o.yaml");
    const edited = applyOverrides(recorded, overrides).conversations;
    expect(edited["review#1"]).toEqual([[{ text: "no" }]]);
    // Round 3 continues write's session: its earlier turns are history, with nothing to expect of them.
    expect(edited["write#3"]).toEqual([
      [{ content: [{ type: "text", text: "one" }] }, { content: [{ type: "text", text: "two" }] }, { text: "three" }],
    ]);
    expect(edited["write#1"]).toBe(recorded.conversations["write#1"]);
  });

  it("refuse a turn after turns nobody gave, and a file that is not an overrides file, with typed errors", () => {
    expect(() => applyOverrides(recorded, parseReplayOverrides("other:\n  1: { text: x }\n", "o.yaml"))).toThrow(
      expect.objectContaining({ code: "REPLAY_OVERRIDES_INVALID", message: expect.stringContaining("give turns 0 to 0 too") }),
    );
    expect(() => parseReplayOverrides("review#1:\n  first: { text: x }\n", "o.yaml")).toThrow(ReplayError);
    expect(() => parseReplayOverrides("review#1:\n  0: { txt: x }\n", "o.yaml")).toThrow(/o\.yaml is not a valid overrides file/);
  });
});
