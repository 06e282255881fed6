// A parent reaches its children mid-turn through `cadre mcp`: query_session on a working child goes into its running turn,
// and steer_workflow_agent messages one agent of a run_workflow run and stops another while the script goes on.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { it } from "../support/fixtures.ts";
import { call, startStdioCadre, textOf } from "../support/mcp.ts";

const WORKFLOW = `export const meta = { name: "pair", description: "two agents in long tool calls" }
const [steered, stopped] = await parallel([
  () => agent("list A", { label: "steer-me" }),
  () => agent("wait long", { label: "stop-me" }),
])
return { steered, stopped }
`;

describe("steering through cadre mcp", () => {
  it("query_session reaches a working child mid-turn; steer_workflow_agent messages one agent and stops another", { timeout: 150_000 }, async ({
    tmp: dir,
  }) => {
    // The workflow's agents may run Bash without asking (spawn_session says so for its child); each tool says when it runs.
    const config = join(dir, "swarm.yaml");
    await writeFile(config, "name: steering\ndefaults: { allowed_tools: [Bash] }\ntasks:\n  - { name: unused, prompt: x }\n");
    const marker = (name: string) => join(dir, name);
    const bash = (name: string, seconds: number) => ({
      tool_use: { name: "Bash", input: { command: `touch ${marker(name)} && sleep ${seconds}`, description: name } },
    });
    const cadre = await startStdioCadre(
      {
        worker: [bash("worker-busy", 3), { text: "worker heard: {{message}}" }],
        "pair/steer-me": [bash("steer-me", 4), { text: "steered: {{message}}" }],
        "pair/stop-me": [bash("stop-me", 60), { text: "never" }],
      },
      ["--config", config],
    );
    const { client } = cadre;

    // A child in a long Bash call takes the message into the turn it is working on.
    const spawned = await call(client, "spawn_session", { prompt: "list A", name: "worker", allowed_tools: ["Bash"], wait_s: 0 });
    expect(spawned.isError).toBeFalsy();
    await expect.poll(() => existsSync(marker("worker-busy")), { timeout: 60_000 }).toBe(true);
    const steered = await call(client, "query_session", { session_id: "worker", prompt: "look at B instead", wait_s: 40 });
    expect(steered.structuredContent).toMatchObject({ status: "idle", turns: 1, result: "worker heard: look at B instead" });

    // A workflow's agents, by their labels.
    const started = await call(client, "run_workflow", { script: WORKFLOW, wait_s: 0 });
    const runId = started.structuredContent!.run_id as string;
    await expect.poll(() => existsSync(marker("steer-me")) && existsSync(marker("stop-me")), { timeout: 60_000 }).toBe(true);
    const listed = await call(client, "get_workflow", { run_id: runId });
    expect((listed.structuredContent!.running_agents as string[]).sort()).toEqual(["steer-me", "stop-me"]);
    const sent = await call(client, "steer_workflow_agent", { run_id: runId, agent: "steer-me", action: "send", message: "look at B" });
    expect(sent.isError, textOf(sent)).toBeFalsy();
    const stoppedAt = Date.now();
    const stopped = await call(client, "steer_workflow_agent", { run_id: runId, agent: "stop-me", action: "stop" });
    expect(stopped.isError, textOf(stopped)).toBeFalsy();
    const unknown = await call(client, "steer_workflow_agent", { run_id: runId, agent: "nobody", action: "stop" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('task "nobody" is not running');

    const done = await call(client, "get_workflow", { run_id: runId, wait_s: 40 });
    expect(done.structuredContent).toMatchObject({
      status: "succeeded",
      result: { steered: "steered: look at B", stopped: null },
      running_agents: [],
    });
    expect(Date.now() - stoppedAt).toBeLessThan(30_000);
  });
});
