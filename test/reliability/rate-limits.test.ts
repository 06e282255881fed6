// 429 (rate limited) and 529 (overloaded) storms on the real CLI: the CLI retries each
// request itself and reports every try; the orchestrator turns those reports into a lower
// limit and a back-off, and every task still succeeds in its first attempt.
import { describe, expect, it } from "vitest";
import type { OrchestratorEvent } from "../../src/orchestrator/index.ts";
import { rehearsedOrchestrator, resultsByName } from "../support/orchestrator.ts";
import { createRehearsal } from "../support/rehearsal.ts";

describe("rate-limit storms", () => {
  it("rides out 429s and 529s: the CLI's retries become back-off and every task succeeds", async () => {
    const refusals = new Map([
      ["t0", 429],
      ["t1", 529],
      ["t2", 429],
      ["t4", 529],
    ]);
    const names = ["t0", "t1", "t2", "t3", "t4", "t5"];
    const server = await createRehearsal(
      Object.fromEntries(
        names.map((name) => {
          const status = refusals.get(name);
          return [name, [{ text: `done ${name}`, ...(status && { fail: { status, times: 2 } }) }]];
        }),
      ),
    );
    const { orchestrator } = await rehearsedOrchestrator(server, { concurrency: 3 });
    const events: OrchestratorEvent[] = [];
    orchestrator.on((e) => events.push(e));
    const results = await resultsByName(orchestrator.map(names.map((name) => ({ name, prompt: `work ${name}` }))));

    for (const name of names) {
      const result = results.get(name)!;
      expect(result.status, `${name}: ${result.error?.message}`).toBe("succeeded");
      expect(result.text).toBe(`done ${name}`);
      // The CLI retried within the attempt; the task was not restarted.
      expect(result.attempts).toBe(1);
    }
    // The model server really refused: twice for each refused script, never for the others.
    for (const name of names) {
      const failed = server.requests.filter((r) => r.script === name && r.outcome === "failed");
      expect(failed, name).toHaveLength(refusals.has(name) ? 2 : 0);
    }
    // The CLI reported its retries with their statuses, and the orchestrator lowered its limit and backed off.
    const retried = events.flatMap((e) =>
      e.type === "task_message" && e.message.type === "system" && e.message.subtype === "api_retry"
        ? [(e.message as { error_status?: number }).error_status]
        : [],
    );
    expect(retried.filter((status) => status === 429).length).toBeGreaterThanOrEqual(4);
    expect(retried.filter((status) => status === 529).length).toBeGreaterThanOrEqual(4);
    const limits = events.flatMap((e) => (e.type === "rate_limit" ? [e.state] : []));
    expect(limits.some((s) => s.rateLimited && s.effectiveLimit < 3)).toBe(true);
    expect(limits.some((s) => s.backoffUntil !== null)).toBe(true);
  }, 120_000);
});
