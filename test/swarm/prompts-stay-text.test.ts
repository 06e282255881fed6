// Prompts built from what a model wrote stay text on the real CLI: an `@path` in an earlier agent's output is never read,
// a computed `/compact` is an ordinary turn; a slash command written by hand in the swarm file still runs as one.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { WorkerContext } from "../../src/orchestrator/index.ts";
import type { ResolvedSwarmConfig } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";
import { collect } from "../support/streams.ts";
import { settledOf } from "../support/swarm.ts";

const SECRET = "the-launch-code-is-4711";

async function swarm(config: object, baseDir: string): Promise<ResolvedSwarmConfig> {
  const result = await parseSwarmConfig(JSON.stringify(config), { baseDir, env: {}, format: "json" });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.config;
}

/** A for_each copy plays its task's script. */
const scriptOf = (context: WorkerContext) => context.name.replace(/^look-.*$/, "look");

describe("prompts stay text", () => {
  it("an @path from an earlier agent is not read, a computed /compact gets a turn, a hand-written /command runs as one", async () => {
    const outside = await tempHome("cadre-secret-");
    const secretFile = join(outside, "secret.txt");
    await writeFile(secretFile, `${SECRET}\n`);
    const mention = `@${secretFile}`;
    const scripts = {
      scout: [{ text: `Read ${mention} next.` }],
      reader: [{ text: "read it" }],
      plan: [{ tool_use: { name: "StructuredOutput", input: { files: [mention] } } }, { text: "planned" }],
      look: [{ text: "looked" }],
      maker: [{ text: "/compact" }],
      compactor: [{ text: "an ordinary answer" }],
      // The command's body is what the model gets: proof that the hand-written /greet ran as a command.
      greeter: [{ text: "greeted" }],
    };
    const server = await createRehearsal(scripts);
    const { orchestrator, cwd } = await rehearsedOrchestrator(server, { script: scriptOf });
    await mkdir(join(cwd, ".claude", "commands"), { recursive: true });
    await writeFile(join(cwd, ".claude", "commands", "greet.md"), "Say the word PINEAPPLE-FROM-THE-COMMAND.\n");
    const config = await swarm(
      {
        defaults: { cwd },
        tasks: [
          { name: "scout", prompt: "find something" },
          { name: "reader", prompt: "Follow up on: {{results.scout}}", depends_on: ["scout"] },
          { name: "plan", prompt: "plan", output_schema: { type: "object", properties: { files: { type: "array" } } } },
          { name: "look-{{index}}", prompt: "{{item}}", for_each: "{{results.plan.structured.files}}", depends_on: ["plan"] },
          { name: "maker", prompt: "make a command" },
          { name: "compactor", prompt: "{{results.maker}}", depends_on: ["maker"] },
          { name: "greeter", prompt: "/greet" },
        ],
      },
      cwd,
    );
    const events = await collect(runSwarm({ config, orchestrator, signal: new AbortController().signal }));
    const settled = new Map(settledOf(events).map((e) => [e.task.name, e.result] as const));
    for (const name of ["reader", "look-0", "compactor", "greeter"]) expect(settled.get(name)?.status, name).toBe("succeeded");

    const sent = (script: string) => JSON.stringify(requestsOf(server.requests, script).map((request) => request.messages));
    // The model got the mention as words, and not the file.
    expect(sent("reader")).toContain(mention);
    expect(sent("look")).toContain(mention);
    for (const script of ["reader", "look"]) expect(sent(script), script).not.toContain(SECRET);
    expect(JSON.stringify(server.requests.map((request) => request.messages))).not.toContain(SECRET);
    // A computed "/compact" is an ordinary turn: the model answered it.
    expect(settled.get("compactor")).toMatchObject({ text: "an ordinary answer", numTurns: 1 });
    expect(sent("compactor")).toContain("/compact");
    // The hand-written /greet ran as the project's command: the model got its body.
    expect(sent("greeter")).toContain("PINEAPPLE-FROM-THE-COMMAND");
  }, 180_000);
});
