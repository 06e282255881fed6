// The placeholders' values read from a Messages API request: {{message}}, a message sent into the running turn.
import { describe, expect, it } from "vitest";
import { templateContext } from "../../src/rehearsal/template.ts";

const FRAMED = (text: string) =>
  `The user sent a new message while you were working:\n${text}\n\nThis is how Claude Code surfaces messages the user sends mid-turn.`;

describe("{{message}}", () => {
  it("is the latest message sent into the running turn, as the CLI framed it, and empty without one", () => {
    const prompt = { role: "user", content: [{ type: "text", text: "list A" }] };
    const toolResult = { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a.ts" }] };
    expect(templateContext([prompt, toolResult], 1, "s").message).toBe("");
    const first = { role: "system", content: [{ type: "text", text: FRAMED("look at B") }] };
    const second = { role: "system", content: [{ type: "text", text: FRAMED("no, at C\nand D") }] };
    const context = templateContext([prompt, { role: "assistant", content: "ok" }, toolResult, first, second], 2, "s");
    expect([context.message, context.prompt]).toEqual(["no, at C\nand D", "list A"]);
  });
});
