// The sandbox's memory limit, measured on this file's own process: not in the fast tier, whose test files
// share one process (and its RSS) with each other.
import { expect, it } from "vitest";
import { runWorkflowScript } from "../../src/workflow/index.ts";

const META = 'export const meta = { name: "probe", description: "a probe" }\n';

it("stops unbounded allocation at its memory limit, and the host's memory stays bounded", async () => {
  const before = process.memoryUsage().rss;
  for (let i = 0; i < 2; i++) {
    const outcome = await runWorkflowScript({
      source: `${META}const a = []; while (true) a.push(Array.from({ length: 10000 }, (_, k) => k))`,
      agents: {
        run: () => Promise.reject(new Error("the script calls no agent")),
      },
      limits: { memoryBytes: 64 * 1024 * 1024 },
    });
    expect(outcome).toMatchObject({
      ok: false,
      error: { code: "WORKFLOW_LIMIT", message: expect.stringMatching(/out of memory \(its limit is 64 MiB\)/) },
    });
  }
  // Two engines filled to 64 MiB each: what stays is far below their sum plus a margin for the test's own heap.
  expect(process.memoryUsage().rss - before).toBeLessThan(2 * 64 * 1024 * 1024 + 64 * 1024 * 1024);
});
