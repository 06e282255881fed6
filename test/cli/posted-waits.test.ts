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

/** Two fixer tasks fill the agent's two slots; each posts a fixer task and waits on it. */
const FULL_LANE = [
  "name: lane",
  "concurrency: 4",
  "defaults: { post_tasks: true }",
  "agents:",
  "  fixer: { description: Fixes, prompt: You fix., max_concurrency: 2 }",
  "tasks:",
  "  - { name: a, agent: fixer, prompt: fix a }",
  "  - { name: b, agent: fixer, prompt: fix b }",
  "rehearsal:",
  ...["a", "b"].flatMap((name) => [
    `  ${name}:`,
    `    - tool_use: { name: mcp__cadre__post_task, input: { name: ${name}2, agent: fixer, prompt: do ${name}2 } }`,
    `    - tool_use: { name: mcp__cadre__wait_tasks, input: { names: [${name}2] } }`,
    `    - text: '${name} got {{tool_result}}'`,
    `  ${name}2: [{ text: ${name}2 done }]`,
  ]),
  "",
].join("\n");

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
      "p got waiting would never end: the run's concurrency is 2, and its slots are all held by tasks that wait (lead, p); end your turn instead, the tasks run after it",
    );
    expect(byName.get("q")).toMatchObject({ status: "succeeded", text: "q done" });
  });

  it("is refused when every slot of the agent a task waited on needs is held by its tasks that wait", { timeout: 120_000 }, async ({ tmp }) => {
    const { exitCode, byName } = await run(tmp, FULL_LANE);
    expect(exitCode).toBe(0);
    // Whichever of a and b waits second is refused; the first one's wait ends once the second has ended its turn.
    const [refused, first] = byName.get("a")?.text?.includes("would never end") ? (["a", "b"] as const) : (["b", "a"] as const);
    expect(byName.get(refused)?.text).toBe(
      `${refused} got waiting would never end: agent fixer's max_concurrency is 2, and its slots are all held by tasks that wait ` +
        `(${first}, ${refused}); end your turn instead, the tasks run after it`,
    );
    expect(byName.get(first)?.text).toContain(`${first}2 done`);
    for (const name of ["a2", "b2"]) expect(byName.get(name)).toMatchObject({ status: "succeeded", text: `${name} done` });
  });
});
