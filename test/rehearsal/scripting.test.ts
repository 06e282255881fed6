// The rehearsal's scripting rules without a server: which script and step a request plays, and the answer it gets.
import { describe, expect, it } from "vitest";
import type { Reply } from "../../src/rehearsal/reply.ts";
import { type ScriptedAnswer, type ScriptedRequest, ScriptRules } from "../../src/rehearsal/scripting.ts";
import type { RequestMessage } from "../../src/rehearsal/template.ts";

const user: RequestMessage = { role: "user", content: "hi" };
const reply: RequestMessage = { role: "assistant", content: [{ type: "text", text: "earlier reply" }] };
const noResponse: RequestMessage = { role: "assistant", content: "No response requested." };

const request = (extra: Partial<ScriptedRequest> = {}): ScriptedRequest => ({
  script: "default",
  agentId: undefined,
  sessionId: "s1",
  messages: [user],
  side: false,
  ...extra,
});

/** The text the scripted model says, or the error's status and message. */
function said(answer: ScriptedAnswer): string | { status: number; message: string } {
  if ("error" in answer) return { status: answer.error.status, message: answer.error.message };
  const built: Reply = answer.reply.build(() => "toolu_1");
  return built.content.map((block) => ("text" in block ? block.text : block.type)).join("");
}

describe("the scripting rules", () => {
  it("play the step numbered by the model's replies in the request, not counting the CLI's placeholder for a turn without one", () => {
    const rules = new ScriptRules({ default: [{ text: "first" }, { text: "second" }] }, false);
    expect(said(rules.rule(request()).answer)).toBe("first");
    expect(rules.rule(request({ messages: [user, reply, user] }))).toMatchObject({ script: "default", step: 1, outcome: "played" });
    expect(rules.rule(request({ messages: [user, noResponse, user] })).step).toBe(0);
  });

  it("say what is missing (a script, a subagent script, a step), warning once each", () => {
    const rules = new ScriptRules({ default: [{ text: "only" }] }, false);
    const unknown = rules.rule(request({ script: "other" }));
    expect([unknown.outcome, said(unknown.answer)]).toEqual([
      "unknown_script",
      { status: 400, message: 'rehearsal: no script named "other" (known scripts: "default")' },
    ]);
    const subagent = rules.rule(request({ agentId: "a1" }));
    expect([subagent.script, subagent.outcome]).toEqual(["default:subagent", "unscripted_subagent"]);
    const exhausted = rules.rule(request({ messages: [user, reply, user] }));
    rules.rule(request({ messages: [user, reply, user] }));
    expect([exhausted.outcome, rules.warnings.length]).toEqual(["exhausted", 3]);
  });

  it("fail a step `times` times after its delay, then play it; a side request uses none of its attempts", () => {
    const rules = new ScriptRules({ default: [{ text: "at last", delay_ms: 5, fail: { status: 529, times: 2 } }] }, false);
    expect(rules.rule(request({ side: true })).outcome).toBe("side");
    const failures = [rules.rule(request()), rules.rule(request())];
    expect(failures.map(({ outcome, answer }) => [outcome, said(answer), answer.delayMs])).toEqual([
      ["failed", { status: 529, message: "rehearsal: scripted 529 (attempt 1 of 2)" }, 5],
      ["failed", { status: 529, message: "rehearsal: scripted 529 (attempt 2 of 2)" }, 5],
    ]);
    expect(said(rules.rule(request()).answer)).toBe("at last");
  });

  it("in a replay, answer a request its recorded step did not expect with a divergence, listed once", () => {
    const rules = new ScriptRules({ default: [{ text: "one" }] }, true);
    const diverged = rules.rule(request({ messages: [user, reply, user] }));
    rules.rule(request({ messages: [user, reply, user] }));
    expect(diverged.outcome).toBe("exhausted");
    expect(said(diverged.answer)).toMatchObject({ status: 400 });
    expect(rules.divergences).toHaveLength(1);
    expect(rules.warnings).toEqual([]);
  });
});
