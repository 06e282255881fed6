// replies.jsonl when cadre is stopped at once: a second Ctrl-C, or SIGTERM twice, ends `cadre run` (a swarm file or a
// workflow script) by process.exit while an agent is in a Bash tool. The file still has every reply cadre had, each
// line whole, and the replies of what had finished can be replayed.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecordedReplies } from "../../src/run/index.ts";
import { bin, repo } from "../support/cli.ts";
import { descendants } from "../support/processes.ts";
import { MINUTE_OF_BASH, survivors, treeWithBashTool } from "../support/reliability.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-replies-signals-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A swarm file: "quick" answers, then "busy" sits in a minute of Bash (its tool call is in replies.jsonl by then). */
async function busySwarm(): Promise<string> {
  const file = join(dir, "busy.yaml");
  const swarm = {
    defaults: { allowed_tools: ["Bash"] },
    tasks: [
      { name: "quick", prompt: "hi" },
      { name: "busy", prompt: "hi", depends_on: ["quick"] },
    ],
    rehearsal: { quick: [{ text: "done quickly" }], busy: [{ tool_use: MINUTE_OF_BASH }, { text: "too late" }] },
  };
  await writeFile(file, JSON.stringify(swarm));
  return file;
}

/** A workflow script with its scripted replies beside it: "quick" answers, then "busy" waits a minute on the model. */
async function busyWorkflow(): Promise<string> {
  const folder = join(dir, "workflow");
  await mkdir(folder);
  const script = [
    'export const meta = { name: "busy", description: "one quick agent, then a slow one" }',
    'await agent("hi", { label: "quick" })',
    'await agent("hi", { label: "busy" })',
    'return "never"',
  ].join("\n");
  await writeFile(join(folder, "busy.js"), `${script}\n`);
  const rehearsal = { quick: [{ text: "done quickly" }], busy: [{ text: "too late", delay_ms: 60_000 }] };
  await writeFile(join(folder, "busy.rehearsal.json"), JSON.stringify(rehearsal));
  return join(folder, "busy.js");
}

/** The run's replies.jsonl: every line whole (each parses), read back as a replay reads it. */
async function readReplies(out: string) {
  const text = await readFile(join(out, "replies.jsonl"), "utf8");
  expect(text.endsWith("\n")).toBe(true);
  const lines = text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines[0]).toMatchObject({ replies: 1 });
  return readRecordedReplies(text).conversations;
}

describe("replies.jsonl on the exit paths cadre controls", () => {
  it("a swarm run stopped by a second Ctrl-C keeps every reply it had, the Bash call it was running included", { timeout: 120_000 }, async () => {
    const out = join(dir, "swarm-out");
    const child = execa("node", [bin, "run", await busySwarm(), "--rehearse", "--out", out], { cwd: repo, reject: false });
    const tree = await treeWithBashTool(child.pid!);
    child.kill("SIGINT");
    // The graceful stop has begun; the second Ctrl-C ends cadre at once (process.exit).
    child.kill("SIGINT");
    const run = await child;
    expect(run.exitCode).toBe(130);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    const conversations = await readReplies(out);
    expect(conversations.quick?.[0]?.[0]?.content).toEqual([{ type: "text", text: "done quickly" }]);
    expect(conversations.busy?.[0]?.[0]?.content).toEqual([expect.objectContaining({ type: "tool_use", name: "Bash" })]);
  });

  it("a workflow run stopped by SIGTERM twice keeps the replies of the agents that had answered", { timeout: 120_000 }, async () => {
    const out = join(dir, "workflow-out");
    const child = execa("node", [bin, "run", await busyWorkflow(), "--rehearse", "--out", out], { cwd: repo, reject: false });
    let stdout = "";
    await new Promise<void>((resolve) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.includes("busy: started")) resolve();
      });
    });
    const tree = await descendants(child.pid!);
    child.kill("SIGTERM");
    child.kill("SIGTERM");
    const run = await child;
    expect(run.exitCode).toBe(143);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    const conversations = await readReplies(out);
    expect(conversations.quick?.[0]?.[0]?.content).toEqual([{ type: "text", text: "done quickly" }]);
  });
});
