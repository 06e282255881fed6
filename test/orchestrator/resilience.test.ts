// What the orchestrator does when things go wrong, on the real CLI: a spent budget,
// cancellation, time limits and a crashing worker (rate limits and workers killed from
// outside are in test/reliability/). Measured from outside where possible: the model
// server's requests and /proc.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Orchestrator, OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { rehearsedOrchestrator, resultsByName } from "../support/orchestrator.ts";
import { isGone, liveClaudeChildren } from "../support/processes.ts";
import { createRehearsal } from "../support/rehearsal.ts";

const FAKE_CLAUDE = fileURLToPath(new URL("../fixtures/fake-claude.mjs", import.meta.url));

function record(orchestrator: Orchestrator): OrchestratorEvent[] {
  const events: OrchestratorEvent[] = [];
  orchestrator.on((e) => events.push(e));
  return events;
}

describe("orchestrator resilience on the real CLI", () => {
  it("stops at the budget: the first task succeeds, the rest are skipped and never reach the model", async () => {
    // One rehearsed turn costs about $0.09 at list price (the CLI's ~22k-token system prompt).
    const server = await createRehearsal({ task: [{ text: "done {{prompt}}" }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 1, budgetUsd: 0.01, script: () => "task" });
    const events = record(orchestrator);
    const names = ["b1", "b2", "b3", "b4"];
    const results = await resultsByName(orchestrator.map(names.map((name) => ({ name, prompt: name }))));

    const first = results.get("b1")!;
    expect(first.costUsd).toBeGreaterThan(0.01);
    for (const name of names.slice(1)) {
      const result = results.get(name)!;
      expect(result.status).toBe("skipped");
      expect(result.error?.code).toBe("BUDGET_EXCEEDED");
      expect(result.attempts).toBe(0);
    }
    const exceeded = events.find((e) => e.type === "budget_exceeded");
    expect(exceeded).toMatchObject({ budgetUsd: 0.01 });
    expect(orchestrator.totals.budgetExceeded).toBe(true);
    // Measured at the model: exactly one conversation turn was played, none after the budget was hit.
    const model = server.requests.filter((r) => r.outcome !== "side");
    expect(model.map((r) => r.outcome)).toEqual(["played"]);
    // The task whose result reached the budget had finished its work.
    expect(first.status, first.error?.message).toBe("succeeded");
    expect(first.text).toBe("done b1");
  }, 60_000);

  it("close() mid-run ends every claude process within 10 s and cancels the tasks", async () => {
    const server = await createRehearsal({ slow: [{ text: "too late", delay_ms: 30_000 }] });
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 4, script: () => "slow" });
    const events = record(orchestrator);
    const running = resultsByName(orchestrator.map(["c1", "c2", "c3", "c4"].map((name) => ({ name, prompt: name }))));
    await expect.poll(() => events.filter((e) => e.type === "task_started").length, { timeout: 30_000 }).toBe(4);
    // All four are waiting on the model.
    await expect.poll(() => server.inFlight, { timeout: 20_000 }).toBe(4);
    expect(await liveClaudeChildren()).toHaveLength(4);

    await orchestrator.close();
    await expect.poll(liveClaudeChildren, { timeout: 10_000, message: "claude processes 10 s after close()" }).toEqual([]);

    const results = await running;
    expect([...results.values()].map((r) => r.status)).toEqual(["cancelled", "cancelled", "cancelled", "cancelled"]);
    expect(server.requests.filter((r) => r.outcome === "played")).toHaveLength(4);
  }, 60_000);

  it("kill() ends every live worker before it returns, without close(): tasks, a session, a peer and a supervisor", async () => {
    const waiting = { text: "too late", delay_ms: 30_000 };
    const server = await createRehearsal({
      asker: [{ tool_use: { id: "toolu_ask", name: "mcp__cadre__ask_peer", input: { peer: "critic", question: "ok?" } } }, { text: "never" }],
      "peer-critic": [waiting],
      toucher: [{ tool_use: { id: "toolu_touch", name: "Bash", input: { command: "touch x", description: "touch" } } }, { text: "never" }],
      "supervisor-guard": [waiting],
      chat: [waiting],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, {
      concurrency: 4,
      agents: {
        researcher: { description: "asks", prompt: "You research." },
        critic: { description: "judges", prompt: "You judge." },
        guard: { description: "approves commands", prompt: "You guard the shell." },
      },
      hooks: { PreToolUse: [{ matcher: "Bash", supervisor: "guard" }] },
    });
    const tasks = Promise.all([
      orchestrator.run({ name: "asker", agent: "researcher", prompt: "ask the critic" }),
      orchestrator.run({ name: "toucher", prompt: "make the file" }),
    ]);
    const turn = orchestrator
      .openSession({ name: "chat" })
      .send("hi")
      // Ended either way: the turn rejects as its process dies, or (when the CLI answers the stop's interrupt before the
      // kill lands, as on a busy machine) it resolves as interrupted. Answered would mean the model's reply came.
      .then(
        (result) => (result.interrupted ? "ended" : "answered"),
        () => "ended",
      );
    // The asker waits on its peer, the toucher on its supervisor; those two and the session wait on the model.
    const asked = (script: string) => server.requests.some((r) => r.script === script);
    await expect
      .poll(() => ["peer-critic", "supervisor-guard", "chat"].filter(asked), {
        timeout: 40_000,
        message: "the peer, the supervisor and the session at the model",
      })
      .toHaveLength(3);
    const workers = await liveClaudeChildren();
    expect(workers).toHaveLength(5);

    orchestrator.kill();
    // Graceful stops would take seconds (an interrupt grace, then stdin EOF and SIGTERM); peers, supervisors and sessions end only at close().
    for (const pid of workers) expect(await isGone(pid), `claude ${pid} survived kill()`).toBe(true);
    expect((await tasks).map((r) => r.status)).toEqual(["cancelled", "cancelled"]);
    expect(await turn).toBe("ended");
  }, 60_000);

  it("a per-task time limit fails the task with TASK_TIMEOUT and ends its process", async () => {
    const server = await createRehearsal({ slow: [{ text: "too late", delay_ms: 30_000 }] });
    const { orchestrator } = await rehearsedOrchestrator(server);
    const events = record(orchestrator);
    // 5 s: long enough for a claude to start on a loaded 2-core machine, far below the 30 s reply.
    const result = await orchestrator.run({ name: "slow", prompt: "take your time", timeoutMs: 5_000 });

    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("TASK_TIMEOUT");
    expect(result.attempts).toBe(1);
    // Stopped near its limit, not when the model would have answered.
    expect(result.durationMs).toBeGreaterThanOrEqual(5_000);
    expect(result.durationMs).toBeLessThan(20_000);
    const started = events.find((e) => e.type === "task_started");
    expect(started?.type === "task_started" && started.pid).toBeTruthy();
    expect(await isGone((started as { pid: number }).pid)).toBe(true);
    expect(await liveClaudeChildren()).toEqual([]);
  }, 60_000);

  it("retries a crashing worker, then fails it with WORKER_EXITED and its exit code; the others succeed", async () => {
    const server = await createRehearsal({ ok1: [{ text: "fine" }], ok2: [{ text: "fine" }] });
    let home = "";
    const { orchestrator, home: sharedHome } = await rehearsedOrchestrator(server, {
      concurrency: 3,
      retries: 2,
      perWorker: (ctx) =>
        ctx.name === "crashy"
          ? {
              claudePath: FAKE_CLAUDE,
              env: { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor("crashy"), home }), FAKE_CLAUDE_MODE: "die-with-permission" },
            }
          : {},
    });
    home = sharedHome;
    const events = record(orchestrator);
    const results = await resultsByName(
      orchestrator.map([
        { name: "ok1", prompt: "one" },
        { name: "crashy", prompt: "crash" },
        { name: "ok2", prompt: "two" },
      ]),
    );

    const crashy = results.get("crashy")!;
    expect(crashy.status).toBe("failed");
    expect(crashy.attempts).toBe(3);
    expect(crashy.error?.code).toBe("WORKER_EXITED");
    expect(crashy.error?.message).toContain("exited with code 7");
    expect(crashy.error?.message).toContain("lost the connection to the model");
    const retries = events.filter((e) => e.type === "task_retry" && e.task.name === "crashy");
    expect(retries).toHaveLength(2);
    // Each attempt was a fresh process, and each one is gone.
    const pids = events.flatMap((e) => (e.type === "task_started" && e.task.name === "crashy" ? [e.pid!] : []));
    expect(new Set(pids).size).toBe(3);
    for (const pid of pids) expect(await isGone(pid)).toBe(true);

    for (const name of ["ok1", "ok2"]) {
      const result = results.get(name)!;
      expect(result.status, result.error?.message).toBe("succeeded");
      expect(result.text).toBe("fine");
    }
  }, 60_000);
});
