// A claude worker killed from outside (the OOM killer, a user's kill -9) in the middle of a
// task: the task is retried when nothing has happened yet, fails cleanly when a tool already
// ran (a retry could repeat its side effects), and the tasks beside it never notice.
import { describe, expect, it, onTestFinished } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator, resultsByName } from "../support/orchestrator.ts";
import { isGone } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { MINUTE_OF_BASH, survivors, treeWithBashTool } from "../support/reliability.ts";
import { until } from "../support/wait.ts";

function startedPids(events: OrchestratorEvent[], name: string): number[] {
  return events.flatMap((e) => (e.type === "task_started" && e.task.name === name && e.pid !== undefined ? [e.pid] : []));
}

const BYSTANDERS = { calm: [{ text: "calm done", delay_ms: 3_000 }], quick: [{ text: "quick done" }] };

describe("a worker killed from outside mid-task", () => {
  it("before any tool ran: the task is retried in a fresh process and succeeds; the others are unaffected", async () => {
    const server = await createRehearsal({ victim: [{ text: "victim done", delay_ms: 3_000 }], ...BYSTANDERS });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 3, retries: 1 });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const running = resultsByName(orchestrator.map(["victim", "calm", "quick"].map((name) => ({ name, prompt: name }))));
    // Mid-reply: the victim's request is waiting on the model, beside the calm one's.
    await until(
      () => (server.requests.some((r) => r.script === "victim" && r.outcome === "played") ? true : undefined),
      30_000,
      "the victim's request",
    );
    const [first] = startedPids(events, "victim");
    process.kill(first!, "SIGKILL");

    const results = await running;
    const victim = results.get("victim")!;
    expect(victim.status, victim.error?.message).toBe("succeeded");
    expect(victim.text).toBe("victim done");
    expect(victim.attempts).toBe(2);
    expect(events.filter((e) => e.type === "task_retry" && e.task.name === "victim")).toHaveLength(1);
    expect(startedPids(events, "victim")).toHaveLength(2);
    for (const name of ["calm", "quick"]) {
      expect(results.get(name), name).toMatchObject({ status: "succeeded", text: `${name} done`, attempts: 1 });
    }
  });

  it("after a tool ran: a clean failure with WORKER_EXITED and the signal, no retry; the others are unaffected; the tool ends too", async () => {
    const server = await createRehearsal({ victim: [{ tool_use: MINUTE_OF_BASH }, { text: "never" }], ...BYSTANDERS });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 3, retries: 2, defaults: { allowedTools: ["Bash"] } });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const running = resultsByName(orchestrator.map(["victim", "calm", "quick"].map((name) => ({ name, prompt: name }))));
    const pid = await until(() => startedPids(events, "victim")[0], 30_000, "the victim's start");
    // Killing only claude leaves its Bash tool (a session of its own) to init; cadre must end it.
    const tree = await treeWithBashTool(pid);
    // Should cadre not, the test ends it, so that a failure leaves nothing behind.
    onTestFinished(() => {
      for (const p of tree) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    });
    process.kill(pid, "SIGKILL");

    const results = await running;
    const victim = results.get("victim")!;
    expect(victim.status).toBe("failed");
    expect(victim.attempts).toBe(1);
    expect(victim.error?.code).toBe("WORKER_EXITED");
    expect(victim.error?.message).toContain("SIGKILL");
    expect(await isGone(pid)).toBe(true);
    expect(await survivors(tree, Date.now() + 5_000)).toEqual([]);
    for (const name of ["calm", "quick"]) {
      expect(results.get(name), name).toMatchObject({ status: "succeeded", text: `${name} done`, attempts: 1 });
    }
  });
});
