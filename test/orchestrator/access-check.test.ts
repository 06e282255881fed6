// The access check's grace, on a fake clock: the others start a moment after the probe's request went out, unless the
// probe's process was slow to get there (a loaded machine: its grace is as long) or the CLI answered itself (no login:
// its result, next, decides). The real CLI's side of it is test/reliability/access.test.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { AccessCheck } from "../../src/orchestrator/access-check.ts";
import type { CliMessage } from "../../src/protocol/index.ts";

const requesting = { type: "system", subtype: "status", status: "requesting", session_id: "s", uuid: "u" } as unknown as CliMessage;
const synthetic = {
  type: "assistant",
  message: { model: "<synthetic>", role: "assistant", content: [{ type: "text", text: "Not logged in · Please run /login" }] },
  session_id: "s",
} as unknown as CliMessage;
const notLoggedIn = {
  type: "result",
  subtype: "success",
  is_error: true,
  result: "Not logged in · Please run /login",
  session_id: "s",
} as unknown as CliMessage;

/** A probe that has leased its process, and a second task waiting: whether it has passed, and the verdict's error. */
async function probeAndWaiter() {
  const check = new AccessCheck(() => {});
  const signal = new AbortController().signal;
  expect(await check.pass(signal)).toBe(true);
  check.probeLeased();
  let passed = false;
  let refused: unknown;
  check.pass(signal).then(
    () => (passed = true),
    (error: unknown) => (refused = error),
  );
  const settle = async (ms: number) => {
    await vi.advanceTimersByTimeAsync(ms);
    return { passed, refused };
  };
  return { check, settle };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the access check's grace", () => {
  // [how long the probe took from its lease to its request, how long the others still wait after it]
  it.each([
    [300, 1_000],
    [3_000, 3_000],
  ])("after a probe that took %i ms to send its request, lets the others start %i ms later", async (toRequest, grace) => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { check, settle } = await probeAndWaiter();
    await settle(toRequest);
    check.observe(requesting);
    expect((await settle(grace - 100)).passed).toBe(false);
    expect((await settle(200)).passed).toBe(true);
  });

  it("stops at the CLI's own answer: the result after it decides, however late", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const { check, settle } = await probeAndWaiter();
    await settle(300);
    check.observe(requesting);
    await settle(500);
    check.observe(synthetic);
    expect(await settle(5_000)).toEqual({ passed: false, refused: undefined });
    check.observe(notLoggedIn);
    const after = await settle(0);
    expect(after.passed).toBe(false);
    expect(after.refused).toMatchObject({ code: "NOT_LOGGED_IN" });
  });
});
