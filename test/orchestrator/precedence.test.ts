// Worker settings: one precedence, defaults < agent < task < call, for every setting and every kind of worker.
// First the rule itself, setting by setting; then the options each kind of worker really starts with,
// on the real CLI (Worker.start is watched, not replaced).
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { layerWorkerOptions, type WorkerLayers } from "../../src/orchestrator/compose.ts";
import type { AgentSpec } from "../../src/orchestrator/index.ts";
import { PEER_TOOL_IDS } from "../../src/orchestrator/peers/peer-server.ts";
import { type HookCallback, Worker, type WorkerOptions } from "../../src/worker/index.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

type Layer = "defaults" | "agent" | "task" | "call";
const LAYERS: readonly Layer[] = ["defaults", "agent", "task", "call"];

/** How an agent definition spells each setting it can carry. */
const AGENT_FIELD: Partial<Record<keyof WorkerOptions, keyof AgentSpec>> = {
  model: "model",
  permissionMode: "permissionMode",
  maxTurns: "maxTurns",
  tools: "tools",
  disallowedTools: "disallowedTools",
  appendSystemPrompt: "prompt",
};

const hook = (): HookCallback => () => ({});
const server = (name: string) => new McpServer({ name, version: "1.0.0" });
const [stopD, stopT, preT, preC] = [hook(), hook(), hook(), hook()];
const [serverD, serverT, serverT2, serverC] = ["d", "t", "t2", "c"].map(server);

interface SettingCase {
  setting: keyof WorkerOptions;
  /** The value each layer gives; a layer that cannot carry the setting is absent. */
  values: Partial<Record<Layer, unknown>>;
  /** Absent: the highest layer that sets it wins. Otherwise what all layers give together, and all but the task. */
  combined?: { all: unknown; withoutTask: unknown };
}

const CASES: SettingCase[] = [
  { setting: "model", values: { defaults: "sonnet", agent: "opus", task: "haiku", call: "claude-x" } },
  { setting: "permissionMode", values: { defaults: "default", agent: "acceptEdits", task: "plan", call: "dontAsk" } },
  { setting: "maxTurns", values: { defaults: 40, agent: 30, task: 20, call: 10 } },
  // [] means no tools at all: it wins like any other value.
  { setting: "tools", values: { defaults: ["Read", "Grep", "Bash"], agent: ["Read", "Grep"], task: ["Read"], call: [] } },
  { setting: "cwd", values: { defaults: "/d", agent: "/a", task: "/t", call: "/c" } },
  { setting: "jsonSchema", values: { defaults: { type: "object" }, agent: { title: "A" }, task: { title: "T" }, call: { title: "C" } } },
  { setting: "fallbackModel", values: { defaults: "sonnet", task: "haiku", call: "opus" } },
  { setting: "maxBudgetUsd", values: { defaults: 4, task: 2, call: 1 } },
  { setting: "systemPrompt", values: { defaults: "D", task: "T", call: "C" } },
  { setting: "settingSources", values: { defaults: ["user"], task: ["project"], call: [] } },
  { setting: "inheritEnv", values: { defaults: true, task: false, call: true } },
  { setting: "permissionPolicy", values: { defaults: "deny", task: "allow", call: "deny" } },
  {
    setting: "appendSystemPrompt",
    values: { defaults: "D", agent: "A", task: "T", call: "C" },
    combined: { all: "D\n\nA\n\nT\n\nC", withoutTask: "D\n\nA\n\nC" },
  },
  // A deny of any layer holds: a higher layer adds to the list, never drops from it.
  {
    setting: "disallowedTools",
    values: { defaults: ["WebFetch"], agent: ["Bash"], task: ["Write"], call: ["Edit"] },
    combined: { all: ["WebFetch", "Bash", "Write", "Edit"], withoutTask: ["WebFetch", "Bash", "Edit"] },
  },
  {
    setting: "additionalDirectories",
    values: { defaults: ["/d"], agent: ["/a"], task: ["/t", "/d"], call: ["/c"] },
    combined: { all: ["/d", "/a", "/t", "/c"], withoutTask: ["/d", "/a", "/c"] },
  },
  {
    setting: "mcpServers",
    values: {
      defaults: { a: { command: "d" } },
      agent: { a: { command: "a" }, g: { command: "g" } },
      task: { a: { command: "t" }, b: { command: "t2" } },
      call: { c: { command: "c" } },
    },
    combined: {
      all: { a: { command: "t" }, g: { command: "g" }, b: { command: "t2" }, c: { command: "c" } },
      withoutTask: { a: { command: "a" }, g: { command: "g" }, c: { command: "c" } },
    },
  },
  {
    setting: "agents",
    values: {
      defaults: { x: { description: "d", prompt: "D" } },
      task: { x: { description: "t", prompt: "T" } },
      call: { y: { description: "c", prompt: "C" } },
    },
    combined: {
      all: { x: { description: "t", prompt: "T" }, y: { description: "c", prompt: "C" } },
      withoutTask: { x: { description: "d", prompt: "D" }, y: { description: "c", prompt: "C" } },
    },
  },
  {
    setting: "allowedTools",
    values: { defaults: ["Read", "Grep"], task: ["Grep", "Bash(git diff:*)"], call: ["mcp__cadre__ask_peer"] },
    combined: { all: ["Read", "Grep", "Bash(git diff:*)", "mcp__cadre__ask_peer"], withoutTask: ["Read", "Grep", "mcp__cadre__ask_peer"] },
  },
  {
    setting: "env",
    values: { defaults: { LAYER: "defaults", D: "1" }, agent: { LAYER: "agent", A: "1" }, task: { LAYER: "task", T: "1" }, call: { C: "1" } },
    combined: { all: { LAYER: "task", D: "1", A: "1", T: "1", C: "1" }, withoutTask: { LAYER: "agent", D: "1", A: "1", C: "1" } },
  },
  {
    setting: "hooks",
    values: {
      defaults: { Stop: [{ hooks: [stopD] }] },
      task: { Stop: [{ hooks: [stopT] }], PreToolUse: [{ hooks: [preT] }] },
      call: { PreToolUse: [{ hooks: [preC] }] },
    },
    combined: {
      all: { Stop: [{ hooks: [stopD] }, { hooks: [stopT] }], PreToolUse: [{ hooks: [preT] }, { hooks: [preC] }] },
      withoutTask: { Stop: [{ hooks: [stopD] }], PreToolUse: [{ hooks: [preC] }] },
    },
  },
  {
    setting: "sdkMcpServers",
    values: { defaults: { a: serverD }, task: { a: serverT, b: serverT2 }, call: { c: serverC } },
    combined: { all: { a: serverT, b: serverT2, c: serverC }, withoutTask: { a: serverD, c: serverC } },
  },
];

/** The layers of one case, with only the given ones present. */
function layersOf(item: SettingCase, present: readonly Layer[]): WorkerLayers {
  const layer = (name: Layer) => (present.includes(name) && name in item.values ? { [item.setting]: item.values[name] } : undefined);
  // An agent carries what its definition knows in the definition, any other setting in `worker`.
  const agentField = AGENT_FIELD[item.setting];
  const own = "agent" in item.values ? (agentField ? { [agentField]: item.values.agent } : { worker: { [item.setting]: item.values.agent } }) : {};
  const agent = present.includes("agent") ? ({ description: "agent", prompt: "", ...own } as AgentSpec) : undefined;
  const call = layer("call");
  return { defaults: layer("defaults"), agent, task: layer("task"), ...(call && { call: () => [call] }) };
}

function subsets<T>(items: readonly T[]): T[][] {
  const all: T[][] = [[]];
  for (const item of items) all.push(...all.map((subset) => [...subset, item]));
  return all.filter((s) => s.length > 0);
}

describe("layerWorkerOptions: defaults < agent < task < call", () => {
  for (const item of CASES.filter((c) => c.combined === undefined)) {
    it(`${item.setting}: the highest layer that sets it wins, whichever layers are present`, () => {
      const carriers = LAYERS.filter((layer) => layer in item.values);
      for (const present of subsets(carriers)) {
        const expected = item.values[present.at(-1)!];
        expect(layerWorkerOptions(layersOf(item, present))[item.setting], present.join(" < ")).toEqual(expected);
      }
    });
  }

  for (const item of CASES.filter((c) => c.combined !== undefined)) {
    it(`${item.setting}: every layer adds to it, in layer order`, () => {
      expect(layerWorkerOptions(layersOf(item, LAYERS))[item.setting]).toEqual(item.combined!.all);
      expect(layerWorkerOptions(layersOf(item, ["defaults", "agent", "call"]))[item.setting]).toEqual(item.combined!.withoutTask);
    });
  }

  it("the call layer sees what the layers below came to", () => {
    const seen: WorkerOptions[] = [];
    layerWorkerOptions({
      defaults: { cwd: "/d" },
      task: { cwd: "/t" },
      call: (settled) => {
        seen.push(settled);
        return [];
      },
    });
    expect(seen.map((s) => s.cwd)).toEqual(["/t"]);
  });
});

describe("every kind of worker gets its layers", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a task, a session, a peer and a supervisor start with the options their layers give, an agent's max turns included", async () => {
    const started = vi.spyOn(Worker, "start");
    const rehearsal = await createRehearsal({
      asker: [
        { tool_use: { id: "toolu_ask", name: "mcp__cadre__ask_peer", input: { peer: "critic", question: "ok?" } } },
        { text: "Final: {{tool_result}}" },
      ],
      "supervisor-guard": [{ text: "ALLOW fine" }],
      "peer-critic": [{ text: "critic says yes" }],
      chat: [{ text: "hello" }],
    });
    const agent = (name: string): AgentSpec => ({
      description: name,
      prompt: `You are ${name}.`,
      model: "opus",
      permissionMode: "acceptEdits",
      maxTurns: 9,
      tools: ["Read", "Bash"],
      disallowedTools: ["WebFetch"],
    });
    const stop = hook();
    const { orchestrator, cwd } = await rehearsedOrchestrator(rehearsal, {
      agents: { researcher: agent("researcher"), critic: agent("critic"), guard: agent("guard") },
      // A long time limit: a busy machine may take a while to start the supervisor, and the test is about settings.
      hooks: { PreToolUse: [{ matcher: "mcp__cadre__ask_peer", supervisor: "guard", timeoutMs: 120_000 }] },
      defaults: {
        model: "sonnet",
        permissionMode: "default",
        maxTurns: 50,
        tools: ["Read", "Grep", "Bash"],
        disallowedTools: ["Write"],
        allowedTools: ["Read"],
        appendSystemPrompt: "DEFAULTS",
        env: { LAYER: "defaults" },
        hooks: { Stop: [{ hooks: [stop] }] },
      },
    });
    const own = join(cwd, "own");
    await mkdir(own);
    const task = await orchestrator.run({
      name: "asker",
      agent: "researcher",
      prompt: "ask the critic",
      model: "haiku",
      cwd: own,
      worker: {
        permissionMode: "dontAsk",
        maxTurns: 5,
        tools: ["Read"],
        disallowedTools: ["Edit"],
        allowedTools: ["Grep"],
        appendSystemPrompt: "TASK",
        env: { LAYER: "task" },
      },
    });
    expect(task.status, task.error?.message).toBe("succeeded");
    expect(task.text).toContain("critic says yes");
    // A session sets what spawn_session can: no max turns, tools or environment of its own.
    const session = orchestrator.openSession({
      name: "chat",
      agent: "researcher",
      model: "haiku",
      cwd: own,
      appendSystemPrompt: "SESSION",
      allowedTools: ["Grep"],
      permissionMode: "dontAsk",
    });
    expect((await session.send("hi")).text).toBe("hello");

    // Each worker's call layer points it at its own script: that says which worker it was.
    const kindOf: Record<string, string> = { asker: "task", chat: "session", "peer-critic": "peer", "supervisor-guard": "supervisor" };
    const byKind = new Map(started.mock.calls.map(([options]) => [kindOf[options!.env!.ANTHROPIC_BASE_URL!.split("/s/")[1]!], options!]));
    expect([...byKind.keys()].sort()).toEqual(["peer", "session", "supervisor", "task"]);
    const peerTools = [...PEER_TOOL_IDS];
    const table: [string, (o: WorkerOptions) => unknown, Record<"task" | "session" | "peer" | "supervisor", unknown>][] = [
      ["model", (o) => o.model, { task: "haiku", session: "haiku", peer: "opus", supervisor: "opus" }],
      ["permission mode", (o) => o.permissionMode, { task: "dontAsk", session: "dontAsk", peer: "acceptEdits", supervisor: "acceptEdits" }],
      ["max turns", (o) => o.maxTurns, { task: 5, session: 9, peer: 9, supervisor: 9 }],
      ["tools", (o) => o.tools, { task: ["Read"], session: ["Read", "Bash"], peer: ["Read", "Bash"], supervisor: ["Read", "Bash"] }],
      [
        "disallowed tools",
        (o) => o.disallowedTools,
        { task: ["Write", "WebFetch", "Edit"], session: ["Write", "WebFetch"], peer: ["Write", "WebFetch"], supervisor: ["Write", "WebFetch"] },
      ],
      [
        "allowed tools",
        (o) => o.allowedTools,
        {
          task: ["Read", "Grep", ...peerTools],
          session: ["Read", "Grep", ...peerTools],
          peer: ["Read", ...peerTools],
          supervisor: ["Read", ...peerTools],
        },
      ],
      [
        "append system prompt",
        (o) => o.appendSystemPrompt,
        {
          task: "DEFAULTS\n\nYou are researcher.\n\nTASK",
          session: "DEFAULTS\n\nYou are researcher.\n\nSESSION",
          peer: "DEFAULTS\n\nYou are critic.",
          supervisor: "DEFAULTS\n\nYou are guard.",
        },
      ],
      ["env", (o) => o.env?.LAYER, { task: "task", session: "defaults", peer: "defaults", supervisor: "defaults" }],
      [
        "hooks",
        (o) => [o.hooks?.Stop?.map((m) => m.hooks[0] === stop), o.hooks?.PreToolUse?.map((m) => m.matcher)],
        {
          task: [[true], ["mcp__cadre__ask_peer"]],
          session: [[true], ["mcp__cadre__ask_peer"]],
          peer: [[true], ["mcp__cadre__ask_peer"]],
          supervisor: [[true], ["mcp__cadre__ask_peer"]],
        },
      ],
      ["cwd", (o) => o.cwd, { task: own, session: own, peer: cwd, supervisor: cwd }],
      ["peer server", (o) => Object.keys(o.sdkMcpServers ?? {}), { task: ["cadre"], session: ["cadre"], peer: ["cadre"], supervisor: ["cadre"] }],
    ];
    for (const [setting, read, expected] of table) {
      for (const [kind, value] of Object.entries(expected)) expect(read(byKind.get(kind)!), `${setting} of the ${kind}`).toEqual(value);
    }
    // The CLI got them too: the peer's model request carries the critic's prompt and model.
    const peerRequest = rehearsal.requests.find((r) => r.script === "peer-critic");
    expect(peerRequest?.system).toContain("You are critic.");
    expect(peerRequest?.model).toContain("opus");
  }, 60_000);
});
