// Control requests from cadre to the real CLI: interrupt, set_model, mcp_status, get_context_usage.
import { describe, expect, it } from "vitest";
import type { Worker } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf } from "../support/requests.ts";
import { startRehearsedWorker } from "../support/worker.ts";

describe("worker control requests", () => {
  it("interrupt during a slow reply ends the turn within a second", async () => {
    const slow = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
    const server = await createRehearsal({ s: [{ text: slow, chunk_delay_ms: 100 }, { text: "after interrupt" }] });
    const { worker } = await startRehearsedWorker(server, "s", { includePartialMessages: true });
    const turn = worker.send("talk slowly");
    let interruptedAt = 0;
    let deltas = 0;
    for await (const message of turn) {
      // Interrupt once some text has streamed, so the partial reply is part of the conversation.
      if (message.type === "stream_event" && message.event.type === "content_block_delta" && ++deltas === 3) {
        interruptedAt = Date.now();
        await worker.interrupt();
      }
    }
    const result = await turn.result;
    const elapsed = Date.now() - interruptedAt;
    expect(interruptedAt).toBeGreaterThan(0);
    // Measured at about 0.1 s; the bound only has to tell "interrupted" from "ran to the end" (20 s) on a noisy machine.
    expect(elapsed).toBeLessThan(3_000);
    // The whole reply would take 20 s; the turn ended early and the worker still works.
    expect(result.type).toBe("result");
    const next = await worker.run("still there?");
    expect(next.text).toBe("after interrupt");
  });

  it("aborting a turn's signal interrupts it", async () => {
    const slow = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const server = await createRehearsal({ s: [{ text: slow, chunk_delay_ms: 100 }] });
    const { worker } = await startRehearsedWorker(server, "s", { includePartialMessages: true });
    const controller = new AbortController();
    const turn = worker.send("talk slowly", { signal: controller.signal });
    let abortedAt = 0;
    for await (const message of turn) {
      // Aborted once the reply streams; all of it would take 20 s.
      if (abortedAt === 0 && message.type === "stream_event") {
        abortedAt = Date.now();
        controller.abort();
      }
    }
    await turn.result;
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
  });

  it("set_model changes the model of the next request", async () => {
    const server = await createRehearsal({ s: [{ text: "one" }, { text: "two" }] });
    const { worker } = await startRehearsedWorker(server, "s", { model: "claude-sonnet-4-5" });
    await worker.run("first");
    await worker.setModel("claude-haiku-4-5");
    await worker.run("second");
    const models = requestsOf(server.requests, "s").map((r) => r.model);
    expect(models).toEqual(["claude-sonnet-4-5", "claude-haiku-4-5"]);
  });

  it("takes only requests the protocol declares (checked by tsc: each line below must not compile)", () => {
    const misuse = (worker: Worker) => [
      // @ts-expect-error no such subtype
      worker.control({ subtype: "set_modle", model: "claude-haiku-4-5" }),
      // @ts-expect-error not a permission mode
      worker.control({ subtype: "set_permission_mode", mode: "yolo" }),
      // @ts-expect-error rewind_files needs user_message_id
      worker.control({ subtype: "rewind_files" }),
    ];
    expect(misuse).toBeTypeOf("function");
  });

  it("mcp_status answers with the servers", async () => {
    const server = await createRehearsal({ s: [{ text: "x" }] });
    const { worker } = await startRehearsedWorker(server, "s");
    const status = await worker.mcpStatus();
    expect(status).toHaveProperty("mcpServers");
  });

  it("get_context_usage counts the system prompt and tools before any turn, and asks the API nothing", async () => {
    const server = await createRehearsal({ s: [{ text: "x" }] });
    const { worker } = await startRehearsedWorker(server, "s");
    const usage = await worker.contextUsage();
    const tokensOf = (id: string) => usage.categories.find((category) => category.id === id)?.tokens ?? 0;
    expect(tokensOf("system_prompt")).toBeGreaterThan(500);
    expect(tokensOf("system_tools")).toBeGreaterThan(5_000);
    expect(usage.totalTokens).toBeGreaterThanOrEqual(tokensOf("system_prompt") + tokensOf("system_tools"));
    expect(server.requests, "a summary is estimated locally").toHaveLength(0);
    expect((await worker.run("hello")).text).toBe("x");
    expect(server.requests).toHaveLength(1);
  });
});
