import { describe, expect, it } from "vitest";
import { loadRehearsalScripts, RehearsalScriptError } from "../../src/rehearsal/script.ts";

describe("loadRehearsalScripts", () => {
  it("reads the YAML a person writes, applying defaults", () => {
    const scripts = loadRehearsalScripts(`
review:
  - text: "Let me look."
    tool_use: { name: Bash, input: { command: "echo hi" } }
  - text: "The output was: {{tool_result}}"
  - delay_ms: 3000
    chunk_delay_ms: 200
    text: "slow ..."
  - fail: { status: 429, times: 2 }
    text: "ok after retries"
  - long_text: 200000
  - tool_uses: [{ name: Read }, { name: Grep, id: toolu_x, input: { pattern: a } }]
    stop_reason: max_tokens
`);
    const review = scripts.review!;
    expect(review).toHaveLength(6);
    expect(review[0]!.tool_use).toEqual({ name: "Bash", input: { command: "echo hi" } });
    expect(review[3]!.fail).toEqual({ status: 429, times: 2 });
    expect(review[5]!.tool_uses).toEqual([
      { name: "Read", input: {} },
      { name: "Grep", id: "toolu_x", input: { pattern: "a" } },
    ]);
    // Without times, every attempt fails; a step may be only a fail, unless it recovers (times) with nothing to say.
    expect(loadRehearsalScripts({ s: [{ fail: { status: 500 }, text: "x" }] }).s![0]!.fail!.times).toBeUndefined();
    expect(loadRehearsalScripts({ s: [{ fail: { status: 400 } }] }).s![0]!.fail).toEqual({ status: 400 });
    expect(() => loadRehearsalScripts({ s: [{ fail: { status: 429, times: 2 } }] })).toThrow(/whose fail has times plays after those attempts/);
  });

  it("reads JSON text too", () => {
    expect(loadRehearsalScripts('{"default": [{"text": "hi"}]}')).toEqual({ default: [{ text: "hi" }] });
  });

  it("names the path of every problem", () => {
    const load = () =>
      loadRehearsalScripts(`
alpha:
  - text: ok
  - tool_use: { input: {} }
beta:
  - txt: "misspelt"
  - fail: { status: 200 }
    text: x
`);
    expect(load).toThrow(RehearsalScriptError);
    expect(load).toThrow(/alpha\[1\]\.tool_use\.name/);
    expect(load).toThrow(/beta\[0\]: a step needs at least one of text, long_text, tool_use, tool_uses/);
    expect(load).toThrow(/beta\[1\]\.fail\.status/);
  });

  it("rejects text that is not YAML, and a script that is not a list", () => {
    expect(() => loadRehearsalScripts("a: [unclosed")).toThrow(/not valid YAML or JSON/);
    expect(() => loadRehearsalScripts("a: { text: hi }")).toThrow(/^invalid rehearsal scripts:\n {2}a: /);
    try {
      loadRehearsalScripts("a: 1");
    } catch (error) {
      expect((error as RehearsalScriptError).code).toBe("REHEARSAL_SCRIPT_INVALID");
    }
    expect.assertions(3);
  });
});
