// The dashboard's steering route in memory: a message reaches the run exactly as typed, and one of whitespace alone is refused, saying so.
import { afterEach, describe, expect, it } from "vitest";
import { LiveRun, serveDashboard, singleRun } from "../../src/dashboard/index.ts";
import { RunModel, type SteerableRun } from "../../src/run/index.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe("the dashboard's steer route", () => {
  it("sends what was typed verbatim, spaces and newlines included, and refuses a message of whitespace alone", async () => {
    const sent: string[] = [];
    const run: SteerableRun = {
      runningTasks: ["busy"],
      send: async (_task, text) => {
        sent.push(text);
      },
      stopTask: async () => {},
      interrupt: async () => {},
    };
    const model = new RunModel({ title: "steer", mode: "swarm", startedAt: 0, tasks: [{ name: "busy" }] });
    const serving = await serveDashboard(singleRun(new LiveRun({ id: "steer", model, steer: run })));
    cleanups.push(() => serving.close());
    const post = (text: string) =>
      fetch(`${serving.origin}/api/runs/steer/steer?token=${serving.token}`, {
        method: "POST",
        body: JSON.stringify({ row: "t:busy", action: "send", text }),
      });

    const typed = "  look at B\n\n  not at A  \n";
    expect((await post(typed)).status).toBe(200);
    expect(sent).toEqual([typed]);
    const empty = await post(" \n\t ");
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("the message is empty (only whitespace): type what to send");
    expect(sent).toEqual([typed]);
  });
});
