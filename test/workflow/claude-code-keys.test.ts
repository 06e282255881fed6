// cadre gives each agent() call the key Claude Code's journal gives it: the keys below are those the pinned CLI
// (2.1.332) wrote to its journal.jsonl for these scripts, run by its Workflow tool against a scripted model.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AgentCall, runWorkflowScript } from "../../src/workflow/index.ts";
import { tempHome } from "../support/rehearsal.ts";
import { result } from "../support/swarm.ts";

/** The calls a script makes, by label, with their Claude Code keys; every agent answers at once. */
async function keysOf(script: string, args?: unknown, cwd?: string): Promise<[string, string][]> {
  const calls: AgentCall[] = [];
  const outcome = await runWorkflowScript({
    source: script,
    ...(args !== undefined && { args }),
    ...(cwd !== undefined && { places: { cwd, home: cwd } }),
    agents: {
      run: async (call) => {
        calls.push(call);
        await new Promise((resolve) => setImmediate(resolve));
        return result(call.label, "succeeded", { text: `did: ${call.prompt}`, ...(call.options.schema && { structuredOutput: { n: 1 } }) });
      },
    },
  });
  expect(outcome.ok, outcome.error?.message).toBe(true);
  return calls.map((call) => [call.label, call.claudeCodeKey.slice(0, 15)]);
}

describe("Claude Code's journal keys", () => {
  it("six agents in a parallel(), then one with a model and a schema after the join", async () => {
    const keys = await keysOf(
      `export const meta = { name: "wide", description: "six agents at once" }
phase("Fan")
const jobs = await parallel([1, 2, 3, 4, 5, 6].map((i) => () => agent("job " + i + " of " + args.of, { label: "job-" + i })))
const s = await agent("sum up", { model: "claude-haiku-4-5", schema: { type: "object", properties: { n: { type: "number" } } } })
return { jobs, s }
`,
      { of: "six" },
    );
    expect(keys.sort()).toEqual(
      [
        ["job-1", "v2:b8fa86cea4c2"],
        ["job-2", "v2:bbbc70fa403b"],
        ["job-3", "v2:1491e37f4318"],
        ["job-4", "v2:bb87587af614"],
        ["job-5", "v2:9a80e34c8feb"],
        ["job-6", "v2:fe06a6258572"],
        ["sum up", "v2:96124ef897a7"],
      ].sort(),
    );
  });

  it("a pipeline's stages, calls made together in a parallel() item, and the same call again", async () => {
    const keys = await keysOf(`export const meta = { name: "shapes", description: "strands" }
const a = await agent("first", { effort: "low", agentType: undefined })
const p = await pipeline(["x", "y"], (item) => agent("find " + item), (found, item) => agent("check " + item, { label: "c-" + item }))
const both = await parallel([() => Promise.all([agent("pa"), agent("pb")]), async () => { const one = await agent("q1"); return agent("q2") }])
const again = await agent("first", { effort: "low" })
return { a, p, both, again }
`);
    const expected = new Map([
      ["first", "v2:6cef398f8e91"],
      ["find x", "v2:0439c99bced9"],
      ["find y", "v2:4038978fa6c3"],
      ["c-x", "v2:3bc5e0780f9a"],
      ["c-y", "v2:5892ace68cc1"],
      ["pa", "v2:f403c3817cfe"],
      ["pb", "v2:04bb2c1e3f85"],
      ["q1", "v2:c158b73cc5fc"],
      ["q2", "v2:36da1a703cab"],
    ]);
    for (const [label, key] of keys.slice(0, -1)) expect(key, label).toBe(expected.get(label));
    expect(keys.at(-1)).toEqual(["first", "v2:79ae2ace5c94"]);
  });
});

describe("Claude Code's journal keys of a nested workflow()", () => {
  it("go on in the strand of the workflow() call, as the CLI's do", async () => {
    const project = await tempHome("cadre-cc-keys-");
    await mkdir(join(project, ".claude", "workflows"), { recursive: true });
    await writeFile(
      join(project, ".claude", "workflows", "child.js"),
      `export const meta = { name: "child", description: "a child" }
const a = await agent("child one " + args.x)
const b = await parallel([() => agent("child two")])
return [a, b]
`,
    );
    const keys = await keysOf(
      `export const meta = { name: "parent", description: "nests" }
const first = await agent("parent one")
const kid = await workflow("child", { x: 1 })
const last = await agent("parent two")
return { first, kid, last }
`,
      undefined,
      project,
    );
    expect(keys).toEqual([
      ["parent one", "v2:07728af0239e"],
      ["child one 1", "v2:05d008a9ed73"],
      ["child two", "v2:8dc94f508af1"],
      ["parent two", "v2:91e2758d4b28"],
    ]);
  });
});

describe("keeping strands across awaits", () => {
  it("leaves what a script means as it was, whatever the await is part of", async () => {
    const outcome = await runWorkflowScript({
      source: `export const meta = { name: "awaits", description: "awaits everywhere" }
const twice = async (x) => await await x
const obj = { async m() { return (await agent("m")) + "!" } }
const parts = \`\${await agent("a")}|\${await twice(agent("b"))}\`
let caught
try { await Promise.reject(new Error("no")) } catch (e) { caught = e.message }
const seen = []
for await (const v of [agent("c"), Promise.resolve("d")]) seen.push(v)
const chained = await agent("e").then((v) => v + "?")
return [parts, await obj.m(), caught, seen, chained, await (async () => await 1 + await 2)()]
`,
      agents: { run: async (call) => result(call.label, "succeeded", { text: call.prompt }) },
    });
    expect(outcome.ok, outcome.error?.message).toBe(true);
    expect(outcome.result).toEqual(["a|b", "m!", "no", ["c", "d"], "e?", 3]);
  });
});
