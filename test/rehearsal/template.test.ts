// The placeholders' values read from a Messages API request: {{message}}, a message sent into the running turn, and
// {{tool_result /PATTERN/}}, what a scripted model picks out of a tool's result for its next call.
import { describe, expect, it } from "vitest";
import { renderDeep, renderTemplate, templateContext } from "../../src/rehearsal/template.ts";

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

describe("{{tool_result /PATTERN/}}", () => {
  const started = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: "t1", content: "workflow pair (wf_0a1b2c3d-4e5) is running: 3 agents started" }],
  };
  const context = templateContext([started], 1, "parent");

  it("is the first match in the tool results, or its first group, and empty when nothing matches", () => {
    expect(renderDeep({ run_id: "{{tool_result /wf_[\\w-]+/}}", n: 3 }, context)).toEqual({ run_id: "wf_0a1b2c3d-4e5", n: 3 });
    expect(renderTemplate("{{ tool_result /(\\d+) agents/ }} agents, {{script}}", context)).toBe("3 agents, parent");
    expect(renderTemplate("[{{tool_result /nothing here/}}]", context)).toBe("[]");
  });

  it("stays as written when its pattern is not a regular expression", () => {
    expect(renderTemplate("{{tool_result /(unclosed/}}", context)).toBe("{{tool_result /(unclosed/}}");
  });
});
