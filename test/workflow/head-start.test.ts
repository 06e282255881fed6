// A workflow run starts the process of its script's first plain agent() call (no options that change its settings)
// while the sandbox loads and the script reaches that call, on the real CLI: the call takes it, and it asked the model
// nothing before. A script whose calls all ask for other settings starts none ahead.
import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { loadRehearsalScripts, type OrchestratorEvent, runWorkflow } from "../../src/index.ts";
import { liveClaudeChildren } from "../support/processes.ts";

type Started = Extract<OrchestratorEvent, { type: "task_started" }>;

// By label: the scripted model plays each call the script of its label. The first reply waits: the claude processes
// alive then are looked at while nothing ends.
const REPLIES = loadRehearsalScripts(`first:\n  - text: "done: {{task}}"\n    delay_ms: 3000\nsecond:\n  - text: "done: {{task}}"\n`);

const script = (options: string) => `export const meta = { name: "two", description: "two agents, one after the other" }
const first = await agent("one", { label: "first"${options} })
return [first, await agent("two", { label: "second"${options} })]
`;

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/**
 * The run's result, the origin of each call's process, and whether the first call's process was the only claude
 * process alive while the first call waited for its reply.
 */
async function run(source: string): Promise<{ workers: string[]; result: unknown; alone: boolean }> {
  dir = await realpath(await mkdtemp(join(tmpdir(), "cadre-wf-head-start-")));
  const started: Started[] = [];
  let live: Promise<number[]> | undefined;
  const { summary, exitCode } = await runWorkflow(source, {
    outDir: join(dir, "run"),
    cwd: dir,
    rehearsal: REPLIES,
    onEvent: (event) => {
      if (event.type !== "task_started") return;
      started.push(event);
      live ??= liveClaudeChildren();
    },
  });
  expect(exitCode, JSON.stringify(summary.error)).toBe(0);
  // One reply per agent: the process started ahead asked the model nothing of its own.
  const replies = (await readFile(join(dir, "run", "replies.jsonl"), "utf8")).split("\n").filter((line) => line.includes('"reply":'));
  expect(replies).toHaveLength(2);
  return { workers: started.map((event) => event.worker), result: summary.result, alone: isDeepStrictEqual(await live, [started[0]!.pid]) };
}

describe("a workflow run's head start", () => {
  it("the first plain call takes the process started while the script loaded; the next reuses it", async () => {
    const { workers, result, alone } = await run(script(""));
    expect(result).toEqual(["done: one", "done: two"]);
    expect(workers).toEqual(["spare", "reused"]);
    expect(alone).toBe(true);
  });

  it("starts nothing ahead for a script whose calls ask for another model: its first call starts its own", async () => {
    const { workers, alone } = await run(script(`, model: "claude-haiku-4-5"`));
    expect(workers).toEqual(["cold", "reused"]);
    // Nothing of the plain call's settings was started beside it.
    expect(alone).toBe(true);
  });
});
