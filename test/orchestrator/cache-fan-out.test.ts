// Cache-aware fan-out on the real CLI: the rehearsal server's prompt cache shows who wrote the shared prefix and who read it.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent, OrchestratorOptions, TaskSpec, WorkerContext } from "../../src/orchestrator/index.ts";
import type { RecordedRequest } from "../../src/rehearsal/server.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { collect } from "../support/streams.ts";

const AGENTS: OrchestratorOptions["agents"] = {
  reviewer: { description: "Reviews a file", prompt: "You review one file and list its bugs." },
  critic: { description: "Criticizes a plan", prompt: "You find the weakest point of a plan." },
};

/** The first model request of each task that reached its script. */
function firstRequests(requests: readonly RecordedRequest[], script: string): RecordedRequest[] {
  return requests.filter((r) => r.script === script && r.step === 0 && r.outcome === "played");
}

/**
 * Of a group's first requests, those that wrote the group's prefix: they read
 * less than the whole of it, which is what the others read (all of them, when
 * none read it).
 */
function prefixWriters(first: RecordedRequest[]): RecordedRequest[] {
  const whole = Math.max(...first.map((r) => r.usage!.cache_read_input_tokens));
  return first.filter((r) => whole === 0 || r.usage!.cache_read_input_tokens < whole);
}

/** Every first request went out before any response began, so none could read the prefix: each wrote it. */
function expectAllAskedAtOnce(first: RecordedRequest[]): void {
  const began = Math.min(...first.map((r) => r.respondedAt!));
  for (const request of first) {
    expect(request.at).toBeLessThan(began);
    expect(request.usage!.cache_read_input_tokens).toBe(0);
  }
}

/** Every worker plays the script named like its agent. */
const byAgent = (context: WorkerContext) => context.agent ?? context.name;

async function runAll(options: OrchestratorOptions, tasks: TaskSpec[], server: Awaited<ReturnType<typeof createRehearsal>>) {
  const { orchestrator } = await rehearsedOrchestrator(server, { agents: AGENTS, ...options, script: byAgent });
  const events: OrchestratorEvent[] = [];
  orchestrator.on((event) => events.push(event));
  return { orchestrator, events, results: await collect(orchestrator.map(tasks)) };
}

const reviews = (n: number, agent = "reviewer"): TaskSpec[] =>
  Array.from({ length: n }, (_, i) => ({ name: `${agent}-${i}`, agent, prompt: `file-${i}.ts` }));

describe("cache-aware fan-out", () => {
  it("12 tasks of one agent at once: the shared prefix is written once or twice and read by the rest", async () => {
    // A slow first token (8 s), as for a long prompt: sent at once, the requests would all come before any response began, and all write.
    const server = await createRehearsal({ reviewer: [{ text: "reviewed {{prompt}}", delay_ms: 8_000 }] });
    const { orchestrator, events, results } = await runAll({ concurrency: 12, cacheStagger: { maxWaitMs: 60_000 } }, reviews(12), server);
    expect(results.map((r) => r.status)).toEqual(Array(12).fill("succeeded"));

    const first = firstRequests(server.requests, "reviewer");
    expect(first).toHaveLength(12);
    const writers = prefixWriters(first);
    expect(writers.length).toBeGreaterThanOrEqual(1);
    expect(writers.length).toBeLessThanOrEqual(2);
    // The rest read Claude Code's tools and system prompt and the agent's prompt: about 20,000 tokens.
    for (const request of first.filter((r) => !writers.includes(r))) expect(request.usage!.cache_read_input_tokens).toBeGreaterThan(15_000);

    // The record shows it.
    const { usage } = orchestrator.totals;
    expect(usage.cacheReadInputTokens).toBeGreaterThan(10 * 15_000);
    expect(usage.cacheCreationInputTokens).toBeGreaterThan(15_000);
    expect(results.filter((r) => r.usage.cacheReadInputTokens > 15_000).length).toBeGreaterThanOrEqual(10);
    // The leader streamed partial messages for the stagger; nobody asked for them, so nobody saw them.
    expect(events.filter((e) => e.type === "task_message" && e.message.type === "stream_event")).toEqual([]);
  }, 180_000);

  it("tasks of two agents form two groups that do not wait on each other", async () => {
    // Both models take 10 s to answer: a group that waited for the other would ask 10 s after it.
    const server = await createRehearsal({
      reviewer: [{ text: "reviewed", delay_ms: 10_000 }],
      critic: [{ text: "criticized", delay_ms: 10_000 }],
    });
    const { results } = await runAll(
      { concurrency: 6, cacheStagger: { maxWaitMs: 60_000 } },
      [...reviews(3, "reviewer"), ...reviews(3, "critic")],
      server,
    );
    expect(results.every((r) => r.status === "succeeded")).toBe(true);
    const reviewers = firstRequests(server.requests, "reviewer");
    const critics = firstRequests(server.requests, "critic");
    expect(reviewers).toHaveLength(3);
    expect(critics).toHaveLength(3);
    // One leader per group...
    expect(prefixWriters(reviewers)).toHaveLength(1);
    expect(prefixWriters(critics)).toHaveLength(1);
    // ... and each group's leader asked before the other group's first answer began.
    const asked = (group: RecordedRequest[]) => Math.min(...group.map((r) => r.at));
    const answered = (group: RecordedRequest[]) => Math.min(...group.map((r) => r.respondedAt!));
    expect(asked(critics)).toBeLessThan(answered(reviewers));
    expect(asked(reviewers)).toBeLessThan(answered(critics));
  }, 120_000);

  it("a leader that fails before its response begins hands the lead on: nobody waits for the cap", async () => {
    // The first three attempts at the script fail with 400: the CLI tries a 400 three times, so the leader's turn fails.
    const server = await createRehearsal({ reviewer: [{ text: "reviewed", fail: { status: 400, times: 3 } }] });
    // A cap far beyond the test's time limit: only the hand-over can release the others.
    const { results } = await runAll({ concurrency: 4, retries: 0, cacheStagger: { maxWaitMs: 600_000 } }, reviews(4), server);
    expect(results.map((r) => r.status).sort()).toEqual(["failed", "succeeded", "succeeded", "succeeded"]);
    expect(server.requests.filter((r) => r.outcome === "failed")).toHaveLength(3);
    const first = firstRequests(server.requests, "reviewer");
    expect(first).toHaveLength(3);
    expect(prefixWriters(first)).toHaveLength(1);
  }, 90_000);

  it("a leader whose response stalls holds its group no longer than the cap", async () => {
    const server = await createRehearsal({ reviewer: [{ text: "reviewed", delay_ms: 12_000 }] });
    const { results } = await runAll({ concurrency: 3, cacheStagger: { maxWaitMs: 1_000 } }, reviews(3), server);
    expect(results.every((r) => r.status === "succeeded")).toBe(true);
    // All asked before any answer began, so each wrote the prefix: the stall cost the saving, not the time.
    expectAllAskedAtOnce(firstRequests(server.requests, "reviewer"));
  }, 90_000);

  it("cacheStagger: false sends every first prompt at once, as before", async () => {
    const server = await createRehearsal({ reviewer: [{ text: "reviewed", delay_ms: 6_000 }] });
    // Without the check that the model can be reached, which holds the others back for a second of the first request.
    const { events, results } = await runAll({ concurrency: 3, cacheStagger: false, accessCheck: false }, reviews(3), server);
    expect(results.every((r) => r.status === "succeeded")).toBe(true);
    expectAllAskedAtOnce(firstRequests(server.requests, "reviewer"));
    expect(events.some((e) => e.type === "task_message" && e.message.type === "stream_event")).toBe(false);
  }, 90_000);

  it("a task that asked for partial messages still gets them", async () => {
    const server = await createRehearsal({ reviewer: [{ text: "reviewed" }] });
    const tasks: TaskSpec[] = [
      { name: "streams", agent: "reviewer", prompt: "a.ts", worker: { includePartialMessages: true } },
      { name: "quiet", agent: "reviewer", prompt: "b.ts" },
    ];
    const { events, results } = await runAll({ concurrency: 2 }, tasks, server);
    expect(results.every((r) => r.status === "succeeded")).toBe(true);
    const streamedBy = new Set(events.flatMap((e) => (e.type === "task_message" && e.message.type === "stream_event" ? [e.task.name] : [])));
    expect([...streamedBy]).toEqual(["streams"]);
  }, 60_000);
});
