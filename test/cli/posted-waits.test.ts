// A wait_tasks that could never end, on real claude workers against the scripted model: the waiter reads a tool
// error that says why and ends its turn, and the run ends, where it used to hang until it was killed.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { cadre, readSummary } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

/** A swarm whose lead posts `p`; `p` posts `q` and waits on it; `q` answers. */
function swarm(concurrency: number, qAfterP: boolean): string {
  return [
    "name: waits",
    `concurrency: ${concurrency}`,
    "defaults: { post_tasks: true }",
    "tasks:",
    "  - { name: lead, prompt: plan }",
    "rehearsal:",
    "  lead:",
    "    - tool_use: { name: mcp__cadre__post_task, input: { name: p, prompt: do p } }",
    "    - tool_use: { name: mcp__cadre__wait_tasks, input: { names: [p] } }",
    "    - text: 'lead got {{tool_result}}'",
    "  p:",
    `    - tool_use: { name: mcp__cadre__post_task, input: { name: q, prompt: do q${qAfterP ? ", depends_on: [p]" : ""} } }`,
    "    - tool_use: { name: mcp__cadre__wait_tasks, input: { names: [q] } }",
    "    - text: 'p got {{tool_result}}'",
    "  q: [{ text: q done }]",
    "",
  ].join("\n");
}

async function run(tmp: string, file: string) {
  await writeFile(join(tmp, "swarm.yaml"), file);
  const ran = await cadre(["run", "swarm.yaml", "--rehearse", "--out", "run"], { cwd: tmp, timeout: 90_000 });
  const summary = await readSummary(join(tmp, "run"));
  return { exitCode: ran.exitCode, byName: new Map(summary.tasks.map((task) => [task.name, task])) };
}

describe("a wait on posted tasks that could never end", () => {
  it("is refused when the task waited on starts only after the waiter", { timeout: 120_000 }, async ({ tmp }) => {
    const { exitCode, byName } = await run(tmp, swarm(4, true));
    expect(exitCode).toBe(0);
    expect(byName.get("p")?.text).toBe(
      'p got waiting would never end: "q" cannot end before you do (q waits for p); end your turn instead, the tasks run after it',
    );
    expect(byName.get("q")).toMatchObject({ status: "succeeded", text: "q done" });
  });

  it("is refused when every slot of the run is held by a task that waits", { timeout: 120_000 }, async ({ tmp }) => {
    const { exitCode, byName } = await run(tmp, swarm(2, false));
    expect(exitCode).toBe(0);
    expect(byName.get("p")?.text).toBe(
      "p got waiting would never end: the run's 2 slots are all held by tasks that wait (lead, p); end your turn instead, the tasks run after it",
    );
    expect(byName.get("q")).toMatchObject({ status: "succeeded", text: "q done" });
  });
});
