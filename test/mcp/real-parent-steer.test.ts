// A real claude parent steers its children through `cadre mcp`: it messages one agent() call of its workflow run, stops one that
// waits for a slot and one that works, and writes into a busy child's running turn with query_session; nothing is left running.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startClaude } from "../support/claude.ts";
import { CADRE_BIN, claudeDescendants, descendants, scriptedWorkspace } from "../support/mcp.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { until } from "../support/wait.ts";

// Two agents in long Bash calls and, beyond the server's concurrency (the parent's child holds the third slot), one that waits.
const WORKFLOW = `export const meta = { name: "pair", description: "agents in long tool calls" }
const [steered, stopped, queued] = await parallel([
  () => agent("list A", { label: "steer-me" }),
  () => agent("wait long", { label: "stop-me" }),
  () => agent("wait your turn", { label: "queued" }),
])
return { steered, stopped, queued }
`;
const RUN_ID = "{{tool_result /wf_[\\w-]+/}}";

describe("a real parent claude steering through cadre mcp", () => {
  it("messages one workflow agent, stops a working and a waiting one, and reaches a busy child mid-turn", { timeout: 150_000 }, async () => {
    const { scriptsFile, tmp } = await scriptedWorkspace({});
    const marker = (name: string) => join(tmp, name);
    const bash = (name: string, seconds: number) => ({
      tool_use: { name: "Bash", input: { command: `touch ${marker(name)} && sleep ${seconds}`, description: name } },
    });
    await writeFile(
      scriptsFile,
      JSON.stringify({
        worker: [bash("worker-busy", 40), { text: "worker heard: {{message}}" }],
        "pair/steer-me": [bash("steer-me", 12), { text: "steered: {{message}}" }],
        "pair/stop-me": [bash("stop-me", 90), { text: "never" }],
        // Its first step leaves a mark: had it reached the model, the mark would be there.
        "pair/queued": [bash("queued-ran", 0), { text: "queued ran" }],
      }),
    );
    const config = join(tmp, "swarm.yaml");
    await writeFile(config, "name: steering\ndefaults: { allowed_tools: [Bash] }\ntasks:\n  - { name: unused, prompt: x }\n");
    const tool = (name: string, input: Record<string, unknown>) => ({ tool_use: { name: `mcp__cadre__${name}`, input } });
    // The parent's model decides each call from what it was given: the run id run_workflow returned, the labels get_workflow lists.
    const server = await createRehearsal({
      parent: [
        tool("spawn_session", { prompt: "list A", name: "worker", allowed_tools: ["Bash"], wait_s: 0 }),
        tool("run_workflow", { script: WORKFLOW, wait_s: 0 }),
        {
          tool_use: {
            name: "Bash",
            input: {
              command: `until [ -e ${marker("worker-busy")} ] && [ -e ${marker("steer-me")} ] && [ -e ${marker("stop-me")} ]; do sleep 0.2; done; echo ${RUN_ID}`,
              description: "wait until the agents are at work",
            },
          },
        },
        tool("get_workflow", { run_id: RUN_ID }),
        tool("steer_workflow_agent", { run_id: RUN_ID, agent: "steer-me", action: "send", message: "look at B" }),
        tool("steer_workflow_agent", { run_id: RUN_ID, agent: "queued", action: "stop" }),
        tool("steer_workflow_agent", { run_id: RUN_ID, agent: "stop-me", action: "stop" }),
        tool("get_workflow", { run_id: RUN_ID, wait_s: 50 }),
        tool("query_session", { session_id: "worker", prompt: "look at B instead", wait_s: 50 }),
        { text: "parent final: {{tool_result}}" },
      ],
    });
    const mcpConfig = {
      mcpServers: {
        cadre: { command: process.execPath, args: [CADRE_BIN, "mcp", "--scripts", scriptsFile, "--config", config, "--concurrency", "3"] },
      },
    };
    const tools = ["spawn_session", "run_workflow", "get_workflow", "steer_workflow_agent", "query_session"].map((name) => `mcp__cadre__${name}`);
    const parent = await startClaude({
      baseUrl: server.baseUrlFor("parent"),
      args: ["--mcp-config", JSON.stringify(mcpConfig), "--strict-mcp-config", "--allowedTools", [...tools, "Bash"].join(",")],
    });
    await parent.initialize();
    parent.sendUser("Run the pair workflow and steer its agents.");
    const cadre = await until(
      async () => (await descendants(parent.pid)).find((p) => p.ppid === parent.pid && (p.comm === "node" || p.comm.startsWith("MainThread"))),
      30_000,
      "cadre mcp under the parent",
    );
    const { result } = await parent.untilResult({ timeoutMs: 120_000 });

    // One turn: query_session's message went into the turn the busy child was working on, and it returned that turn's answer.
    expect(result.is_error).toBe(false);
    expect(result.result).toMatch(/^parent final: \{.*"name":"worker","status":"idle","turns":1,.*"result":"worker heard: look at B instead"\}$/);
    const played = requestsOf(server.requests, "parent");
    // What the model was given after that step: the tool results of the request's last user message (the CLI may add others).
    const seenAfter = (step: number) => {
      const messages = played[step + 1]!.messages.filter((message) => message.role === "user");
      return toolResults({ ...played[step + 1]!, messages: messages.slice(-1) }).join("\n");
    };
    // get_workflow told the model the labels it then steered, the waiting one among them.
    expect(JSON.parse(seenAfter(3))).toMatchObject({ name: "pair", status: "running", running_agents: ["steer-me", "stop-me", "queued"] });
    // Each steer_workflow_agent call reached its agent (a refusal would be an error's text, not the run's status).
    for (const step of [4, 5, 6]) expect(JSON.parse(seenAfter(step))).toMatchObject({ name: "pair" });
    // The script went on past both stops: the steered agent's answer after the message, null for each stopped call.
    expect(JSON.parse(seenAfter(7))).toMatchObject({ status: "succeeded", result: { steered: "steered: look at B", stopped: null, queued: null } });
    expect(existsSync(marker("queued-ran"))).toBe(false);

    // Closing the parent ends cadre mcp and every claude it started.
    const children = await claudeDescendants(cadre.pid);
    expect(children.length, "the child session's claude at least").toBeGreaterThan(0);
    await parent.close();
    expect(await isGone(cadre.pid, 15_000)).toBe(true);
    expect(await until(async () => ((await Promise.all(children.map((c) => isGone(c)))).every(Boolean) ? true : undefined), 10_000)).toBe(true);
  });
});
