// Which scripts make a plain agent() call (no options that change its task's settings): a run prepares the process of
// such a call while its sandbox loads, and none for a script whose every call asks for other settings.
import { describe, expect, it } from "vitest";
import { checkWorkflowScript } from "../../src/workflow/index.ts";

const META = `export const meta = { name: "s", description: "d" }\n`;
const plain = async (body: string) => (await checkWorkflowScript(META + body)).makesPlainCalls;

describe("makesPlainCalls", () => {
  it("is true for a call without options or with only label and phase, wherever it stands", async () => {
    expect(await plain(`return await agent("a")`)).toBe(true);
    expect(await plain(`return await agent("a", { label: "x", phase: "p" })`)).toBe(true);
    expect(await plain(`const label = "x"\nreturn await agent("a", { label, "phase": "p" })`)).toBe(true);
    expect(await plain(`return await parallel(args.items.map((item) => () => agent(item, { label: item })))`)).toBe(true);
    expect(await plain(`await agent("a", { schema: {} })\nreturn await agent("b")`)).toBe(true);
  });

  it("is false when every call may ask for other settings, or the script makes none", async () => {
    expect(await plain(`return 1`)).toBe(false);
    expect(await plain(`return await agent("a", { schema: { type: "object", properties: {} } })`)).toBe(false);
    expect(await plain(`return await agent("a", { label: "x", model: "haiku" })`)).toBe(false);
    expect(await plain(`return await agent("a", { agentType: "reviewer" })`)).toBe(false);
    // Options it cannot read count as settings of their own.
    expect(await plain(`const options = { label: "x" }\nreturn await agent("a", options)`)).toBe(false);
    expect(await plain(`return await agent("a", { ...args.options })`)).toBe(false);
    expect(await plain(`return await agent("a", { ["label"]: "x" })`)).toBe(false);
    // Another function of that name, a method, is not the dialect's.
    expect(await plain(`return await args.agent("a")`)).toBe(false);
  });
});
