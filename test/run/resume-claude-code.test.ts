// Reading a run of Claude Code's Workflow tool from the CLI's session files, as 2.1.332 writes them: which calls hold a
// result (as the CLI reads its journal), and the one-line refusals, without a process.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readClaudeCodeRun } from "../../src/run/index.ts";
import { tempHome } from "../support/rehearsal.ts";

const key = (n: number) => `v2:${String(n).repeat(64).slice(0, 64)}`;

/** A project whose Claude Code session holds run `wf_test-1` with this journal; its cwd and home. */
async function project(journal: readonly (object | string)[], cwd = "/work/my-project") {
  const home = await tempHome("cadre-cc-run-");
  const session = join(home, ".claude", "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-").slice(0, 200) + (cwd.length > 200 ? "-abc" : ""), "s-1");
  await mkdir(join(session, "workflows"), { recursive: true });
  await mkdir(join(session, "subagents", "workflows", "wf_test-1"), { recursive: true });
  await writeFile(
    join(session, "workflows", "wf_test-1.json"),
    JSON.stringify({ runId: "wf_test-1", script: "export const meta = {}", args: { n: 1 } }),
  );
  const lines = journal.map((line) => (typeof line === "string" ? line : JSON.stringify(line)));
  await writeFile(join(session, "subagents", "workflows", "wf_test-1", "journal.jsonl"), `${lines.join("\n")}\n`);
  return { cwd, home };
}

describe("a Claude Code run, read from its session files", () => {
  it("holds the results that stand: a call that failed, or started again after its result, has none", async () => {
    const places = await project([
      { type: "launched" },
      { type: "started", key: key(1), agentId: "a1", label: "one" },
      { type: "result", key: key(1), agentId: "a1", result: "first" },
      { type: "started", key: key(2), agentId: "a2", label: "two" },
      { type: "failed", key: key(2), agentId: "a2" },
      { type: "result", key: key(3), agentId: "a3", result: { n: 3 } },
      { type: "started", key: key(3), agentId: "a4", label: "three" },
      { type: "something_newer", key: "x" },
      '{"type":"result","key":"v2:cut sh',
    ]);
    const run = await readClaudeCodeRun("wf_test-1", places);
    expect(run).toMatchObject({ runId: "wf_test-1", sessionId: "s-1", args: { n: 1 } });
    expect(run.calls).toEqual([{ index: 1, key: key(1), status: "succeeded", value: "first", name: "one", claude_code_run: "wf_test-1" }]);
  });

  it("finds the project of a long path as the CLI names it (cut, with a hash after)", async () => {
    const places = await project([{ type: "result", key: key(1), agentId: "a1", result: "x" }], `/work/${"deep/".repeat(50)}project`);
    expect((await readClaudeCodeRun("wf_test-1", places)).calls).toHaveLength(1);
  });

  it("refuses keys of another format in one line", async () => {
    const places = await project([{ type: "result", key: `v3:${"a".repeat(64)}`, agentId: "a1", result: "x" }]);
    await expect(readClaudeCodeRun("wf_test-1", places)).rejects.toThrow(/is of another format \(keys v3, cadre reads v2: Claude Code 2\.1\.332\)$/);
  });
});
