// Initialize, turns and resume on the real CLI.
import { describe, expect, it, onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import { SessionNotFoundError, Worker } from "../../src/worker/index.ts";
import { createRehearsal, tempHome } from "../support/rehearsal.ts";
import { conversationText, requestsOf } from "../support/requests.ts";
import { isAlive, startRehearsedWorker } from "../support/worker.ts";

describe("worker session", () => {
  it("configures the CLI through initialize: appendSystemPrompt and agents", async () => {
    const server = await createRehearsal({ hello: [{ text: "hello back" }] });
    const { worker } = await startRehearsedWorker(server, "hello", {
      appendSystemPrompt: "CADRE-MARKER: you are worker seven.",
      agents: { "bug-hunter": { description: "Finds bugs", prompt: "You hunt bugs.", tools: ["Read"] } },
    });
    expect(worker.state).toBe("ready");
    const result = await worker.run("hi");
    expect(result.text).toBe("hello back");
    expect(result.isError).toBe(false);
    expect(result.sessionId).toMatch(/[0-9a-f-]{36}/);
    expect(worker.sessionId).toBe(result.sessionId);
    const [request] = requestsOf(server.requests, "hello");
    expect(request?.system).toContain("CADRE-MARKER: you are worker seven.");
    const agents = (worker.session as { agents?: unknown[] } | undefined)?.agents ?? [];
    expect(JSON.stringify(agents)).toContain("bug-hunter");
    expect(worker.state).toBe("idle");
  });

  it("keeps context across turns in one process and queues a prompt sent while busy", async () => {
    const server = await createRehearsal({
      chat: [{ text: "first answer", delay_ms: 300 }, { text: "second: {{prompt}}" }],
    });
    const { worker } = await startRehearsedWorker(server, "chat");
    const pid = worker.pid;
    const first = worker.send("remember the word PAPRIKA");
    const second = worker.send("what was the word?");
    const states: string[] = [];
    worker.on((e) => e.type === "state" && states.push(e.state));
    const streamed: string[] = [];
    for await (const message of first) streamed.push(message.type);
    expect(streamed.at(-1)).toBe("result");
    expect(streamed).toContain("assistant");
    const secondResult = await second.collect();
    expect(secondResult.text).toBe("second: what was the word?");
    expect(worker.pid).toBe(pid);
    const requests = requestsOf(server.requests, "chat");
    expect(requests).toHaveLength(2);
    // The second request carries the first turn: same conversation, same process.
    expect(conversationText(requests[1])).toContain("PAPRIKA");
    expect(conversationText(requests[1])).toContain("first answer");
    expect(states).toContain("idle");
  });

  it("resumes a session by id in a new process", async () => {
    const server = await createRehearsal({ memo: [{ text: "noted" }, { text: "you said {{prompt}}" }] });
    const first = await startRehearsedWorker(server, "memo");
    const { sessionId } = await first.worker.run("the code word is TANGERINE");
    await first.worker.close();
    expect(isAlive(first.worker.pid)).toBe(false);

    // Same HOME: the CLI keeps its sessions there.
    const resumed = await Worker.start({
      cwd: first.cwd,
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("memo"), home: first.home }),
      resume: sessionId,
    });
    onTestFinished(async () => {
      await resumed.close();
    });
    const result = await resumed.run("and now?");
    expect(result.text).toBe("you said and now?");
    expect(result.sessionId).toBe(sessionId);
    const requests = requestsOf(server.requests, "memo");
    expect(conversationText(requests.at(-1))).toContain("TANGERINE");
    await resumed.close();
    expect(isAlive(resumed.pid)).toBe(false);

    // Another HOME (another machine, to the CLI) has no such session: a typed error that says so.
    const elsewhere = await tempHome();
    const refused = await Worker.start({
      cwd: first.cwd,
      inheritEnv: false,
      env: offlineClaudeEnv({ baseUrl: server.baseUrlFor("memo"), home: elsewhere }),
      resume: sessionId,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SessionNotFoundError);
    expect(refused).toMatchObject({ code: "SESSION_NOT_FOUND", sessionId, cause: { code: "WORKER_EXITED", exitCode: 1 } });
    expect((refused as Error).message).toContain(`cannot resume session ${sessionId}`);
  });
});
