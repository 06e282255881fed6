// runSwarm on the real CLI: tasks in dependency order, and one task_settled per task,
// with the swarm's own results for the tasks it never hands to the orchestrator.
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { orchestratorOptionsFor, type ResolvedSwarmConfig } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { runSwarm } from "../../src/swarm/runner.ts";
import { rehearsedOrchestrator } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { conversationText, requestsOf } from "../support/requests.ts";
import { collect } from "../support/streams.ts";
import { settledOf } from "../support/swarm.ts";

async function swarm(lines: string[]): Promise<ResolvedSwarmConfig> {
  const result = await parseSwarmConfig(lines.join("\n"), { baseDir: tmpdir(), env: {} });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.config;
}

describe("runSwarm", () => {
  it("settles every task once: what ran with its own result, a dependant of a failure skipped without starting", async () => {
    const config = await swarm([
      "tasks:",
      "  - { name: first, prompt: hi }",
      "  - { name: broken, prompt: hi }",
      "  - { name: after-broken, prompt: 'use {{results.broken}}', depends_on: [broken] }",
      "  - { name: after-first, prompt: 'use {{results.first}}', depends_on: [first] }",
    ]);
    const server = await createRehearsal({
      first: [{ text: "one" }],
      broken: [{ text: "never", fail: { status: 400, times: 3, message: "scripted outage" } }],
      "after-first": [{ text: "two" }],
    });
    const { orchestrator } = await rehearsedOrchestrator(server, orchestratorOptionsFor(config));
    const events = settledOf(await collect(runSwarm({ config, orchestrator, signal: new AbortController().signal })));

    const seen = events.map((e) => [e.task.name, e.result.status, e.started]);
    expect([...seen].sort()).toEqual([
      ["after-broken", "skipped", false],
      ["after-first", "succeeded", true],
      ["broken", "failed", true],
      ["first", "succeeded", true],
    ]);
    const at = (name: string) => events.findIndex((e) => e.task.name === name);
    expect(at("after-broken")).toBeGreaterThan(at("broken"));
    expect(at("after-first")).toBeGreaterThan(at("first"));
    expect(events[at("after-broken")]!.result).toMatchObject({
      attempts: 0,
      error: { code: "DEPENDENCY_FAILED", message: 'dependency "broken" failed' },
    });
    // {{results.first}} was filled in before the dependant started; the skipped one never reached the model.
    expect(conversationText(requestsOf(server.requests, "after-first")[0])).toContain("use one");
    expect(requestsOf(server.requests, "after-broken")).toEqual([]);
  });

  it("on interrupt, settles a waiting task as cancelled without starting it, and the running one as cancelled", async () => {
    const config = await swarm([
      "tasks:",
      "  - { name: slow, prompt: hi }",
      "  - { name: later, prompt: 'after {{results.slow}}', depends_on: [slow] }",
    ]);
    const server = await createRehearsal({ slow: [{ text: "too late", delay_ms: 30_000 }] });
    const { orchestrator } = await rehearsedOrchestrator(server, orchestratorOptionsFor(config));
    orchestrator.on((event) => event.type === "task_started" && setTimeout(() => interrupt.abort(), 500));
    const interrupt = new AbortController();
    const events = settledOf(await collect(runSwarm({ config, orchestrator, signal: interrupt.signal })));

    expect(events.map((e) => [e.task.name, e.result.status, e.started])).toEqual([
      ["later", "cancelled", false],
      ["slow", "cancelled", true],
    ]);
    expect(events[0]!.result.error).toEqual({ code: "INTERRUPTED", message: "interrupted before it started" });
  });
});
