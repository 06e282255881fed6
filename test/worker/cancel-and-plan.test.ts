// The CLI withdrawing a permission request, plan review, and forking a session, on the real CLI.
import { describe, expect, it, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { planReview, Worker } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { isAlive, startRehearsedWorker } from "../support/worker.ts";

describe("worker: cancel, plan review, fork", () => {
  it("an interrupt while a permission request waits cancels it: the handler's signal aborts, no answer is written", async () => {
    const server = await createRehearsal({ s: [{ tool_use: { name: "Bash", input: { command: "touch never.txt" } } }, { text: "next" }] });
    let handlerSignal: AbortSignal | undefined;
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const { worker } = await startRehearsedWorker(server, "s", {
      canUseTool: ({ signal }) => {
        handlerSignal = signal;
        asked();
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      },
    });
    const turn = worker.send("go");
    await waiting;
    await worker.interrupt();
    const result = await turn.result;
    expect(handlerSignal?.aborted).toBe(true);
    expect(result.subtype).toBe("error_during_execution");
    // The worker is still usable after the cancelled request.
    expect((await worker.run("again")).text).toBe("next");
  });

  it("plan review: revise keeps the agent planning and the model gets the feedback", async () => {
    const server = await createRehearsal({
      s: [{ tool_use: { name: "ExitPlanMode", input: { plan: "1. delete everything" } } }, { text: "revising: {{tool_result}}" }],
    });
    const reviews: string[] = [];
    const { worker } = await startRehearsedWorker(server, "s", {
      permissionMode: "plan",
      canUseTool: (request) => {
        if (!planReview.matches(request)) return { behavior: "deny", message: "unexpected tool" };
        reviews.push(request.toolName);
        return planReview.revise("PLAN-FEEDBACK: keep the data");
      },
    });
    const result = await worker.run("make a plan");
    expect(reviews).toEqual(["ExitPlanMode"]);
    expect(toolResults(requestsOf(server.requests, "s").at(-1)).join("")).toContain("PLAN-FEEDBACK: keep the data");
    expect(result.text).toContain("PLAN-FEEDBACK");
  });

  it("forks a session: the fork has the history under a new session id", async () => {
    const server = await createRehearsal({ f: [{ text: "stored" }, { text: "fork answer" }] });
    const first = await startRehearsedWorker(server, "f");
    const { sessionId } = await first.worker.run("the secret is HERON");
    await first.worker.close();
    const fork = await Worker.start({
      cwd: first.cwd,
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("f"), home: first.home }),
      resume: sessionId,
      forkSession: true,
    });
    onTestFinished(async () => {
      await fork.close();
    });
    const result = await fork.run("and?");
    expect(result.text).toBe("fork answer");
    expect(result.sessionId).not.toBe(sessionId);
    expect(JSON.stringify(requestsOf(server.requests, "f").at(-1)?.messages)).toContain("HERON");
    await fork.close();
    expect(isAlive(fork.pid)).toBe(false);
  });
});
