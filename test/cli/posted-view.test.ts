// How `cadre run` shows the tasks agents posted, from real runs of examples/posted-tasks.yaml (--rehearse): each
// tasks_added of --json names its poster; the plain lines say who posted each task as it joins; the live view's
// frame, drawn from the events the run printed, and the final table name the poster beside the task.
import { join } from "node:path";
import { describe, expect } from "vitest";
import { colorsFor } from "../../src/cli/run/view/format.ts";
import { renderFrame } from "../../src/cli/run/view/tty.ts";
import { type RunEvent, RunModel } from "../../src/run/index.ts";
import { cadre, repo } from "../support/cli.ts";
import { it } from "../support/fixtures.ts";

const EXAMPLE = join(repo, "examples", "posted-tasks.yaml");
const POSTED = ["fix-cache", "fix-retry", "fix-slug"];

/** The final table's row of each task: its first cell, up to the status. */
const finalNames = (table: string) => [...table.matchAll(/^(\S.*?)\s{2,}succeeded\s/gm)].map((match) => match[1]);

describe("a run with posted tasks, on the terminal", () => {
  it("--json: each posted task's tasks_added names the lead; the live frame drawn from those events and the final table name it too", async ({
    tmp,
  }) => {
    const run = await cadre(["run", EXAMPLE, "--rehearse", "--json", "--out", join(tmp, "out")], { cwd: tmp });
    expect(run.exitCode, run.stderr).toBe(0);
    const events = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as RunEvent);
    const added = events.flatMap((event) => (event.type === "tasks_added" ? event.tasks.map((task) => [task.name, event.parent, task.posted]) : []));
    expect(added).toEqual(POSTED.map((name) => [name, "lead", { by: "lead", depth: 1 }]));

    // The live view's frame of the same run, drawn from the events it printed.
    const model = new RunModel({ title: "posted-tasks", mode: "swarm", tasks: [{ name: "lead" }], startedAt: 0 });
    for (const event of events) model.apply(event, 0);
    const frame = renderFrame(model, { now: 0, width: 160, height: 40, colors: colorsFor({ isTTY: false }, {}) });
    const names = [...frame.matchAll(/^✔ (.+?)\s{2,}succeeded/gm)].map((match) => match[1]);
    expect(names).toEqual(["lead", ...POSTED.map((name) => `${name} (by lead)`)]);

    // With --json, the final table goes to stderr.
    expect(finalNames(run.stderr)).toEqual(["lead", ...POSTED.map((name) => `${name} (by lead)`)]);
  });

  it("plain lines: a posted task is told as it joins the run, before it starts", async ({ tmp }) => {
    const run = await cadre(["run", EXAMPLE, "--rehearse", "--out", join(tmp, "out")], { cwd: tmp });
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.split("\n").map((line) => line.replace(/^\d\d:\d\d:\d\d /, ""));
    for (const name of POSTED) {
      const joined = lines.indexOf(`${name}: posted by lead`);
      expect(joined, `${name} in\n${run.stdout}`).toBeGreaterThan(0);
      expect(lines.indexOf(`${name}: started`)).toBeGreaterThan(joined);
    }
    // The refused post joined nothing.
    expect(run.stdout).not.toContain("fix-queue: posted");
    expect(finalNames(run.stdout)).toEqual(["lead", ...POSTED.map((name) => `${name} (by lead)`)]);
  });
});
