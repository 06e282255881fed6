// A replayed request compared with its recorded step: what diverges, and how it is told.
import { describe, expect, it } from "vitest";
import { seen } from "../../src/protocol/index.ts";
import { divergenceOf } from "../../src/rehearsal/divergence.ts";

const reply = { content: [{ type: "text", text: "ok" }] };
const prompt = (text: string) => [{ role: "user", content: [{ type: "text", text: `<system-reminder>ctx</system-reminder>${text}` }] }];
const afterTool = (output: string) => [
  { role: "user", content: "go" },
  { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: output }] }] },
];

describe("divergenceOf", () => {
  it("passes a request that carries what the record expects, reminders left out", () => {
    expect(divergenceOf("s", 0, true, { ...reply, expect: { prompt: seen("hello"), tool_results: [] } }, prompt("hello"))).toBeUndefined();
    expect(divergenceOf("s", 1, true, { ...reply, expect: { tool_results: [{ id: "t1", ...seen("out") }] } }, afterTool("out"))).toBeUndefined();
  });

  it("names the session, the turn, what was expected and what came", () => {
    expect(divergenceOf("s", 0, true, { ...reply, expect: { prompt: seen("hello"), tool_results: [] } }, prompt("bye"))).toMatchObject({
      kind: "prompt",
      expected: "hello",
      got: "bye",
      message: 'replay diverged: s, turn 0: the prompt differs from the recorded one; expected "hello", got "bye"',
    });
    expect(divergenceOf("s", 1, true, { ...reply, expect: { tool_results: [{ id: "t1", ...seen("out") }] } }, afterTool("other"))).toMatchObject({
      kind: "tool_result",
      expected: "t1: out",
      got: "t1: other",
    });
    // A tool result the record does not have.
    expect(divergenceOf("s", 1, true, { ...reply, expect: { tool_results: [] } }, afterTool("out"))).toMatchObject({
      kind: "tool_result",
      got: "t1: out",
    });
    expect(divergenceOf("s", 3, true, undefined, afterTool("out"))).toMatchObject({ kind: "no_reply", step: 3 });
    expect(divergenceOf("s#4", 0, false, undefined, prompt("hi"))).toMatchObject({ kind: "no_record", got: "hi" });
  });
});
