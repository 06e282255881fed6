import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { commandHook, HookCommandError, HookTimeoutError, withFallback } from "../../../src/orchestrator/hooks/index.ts";
import type { HookOutput } from "../../../src/protocol/index.ts";
import type { HookCallback } from "../../../src/worker/hooks.ts";
import { it } from "../../support/fixtures.ts";
import { hookInput } from "../../support/hook-input.ts";
import { isGone } from "../../support/processes.ts";

const context = (signal = new AbortController().signal) => ({ toolUseId: "toolu_1", signal });
const preToolUse = hookInput({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } });

const failing: HookCallback = () => {
  throw new Error("supervisor unreachable");
};

describe("withFallback", () => {
  it("passes a working hook's answer through untouched", async () => {
    const answer: HookOutput = { decision: "block", reason: "mine" };
    const failures: unknown[] = [];
    const hook = withFallback(async () => answer, { onError: "deny", timeoutMs: 5_000, onFailure: (e) => failures.push(e) });
    expect(await hook(preToolUse, context())).toBe(answer);
    expect(failures).toEqual([]);
  });

  it("on a throw with onError deny: reports the error and denies, saying the hook failed and why", async () => {
    const failures: unknown[] = [];
    const result = await withFallback(failing, { onError: "deny", onFailure: (e) => failures.push(e) })(preToolUse, context());
    expect(failures).toHaveLength(1);
    expect((failures[0] as Error).message).toBe("supervisor unreachable");
    expect(result.decision).toBe("block");
    expect(result.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    const reason = (result.hookSpecificOutput as { permissionDecisionReason: string }).permissionDecisionReason;
    expect(reason).toContain("PreToolUse hook failed");
    expect(reason).toContain("supervisor unreachable");
  });

  it("on a throw with onError allow: reports the error and has no opinion", async () => {
    const failures: unknown[] = [];
    const result = await withFallback(failing, { onError: "allow", onFailure: (e) => failures.push(e) })(preToolUse, context());
    expect(result).toEqual({});
    expect(failures).toHaveLength(1);
  });

  it("denies in the blocking form of the event the hook ran for", async () => {
    const result = await withFallback(failing, { onError: "deny" })(hookInput({ hook_event_name: "Stop" }), context());
    expect(result).toEqual({ decision: "block", reason: expect.stringContaining("Stop hook failed") });
  });

  it("turns a command hook's non-blocking error into a denial", async () => {
    const failures: unknown[] = [];
    const hook = withFallback(commandHook("echo 'cannot reach the policy server' >&2; exit 1"), {
      onError: "deny",
      onFailure: (e) => failures.push(e),
    });
    const result = await hook(preToolUse, context());
    expect(failures[0]).toBeInstanceOf(HookCommandError);
    expect(result.reason).toContain("cannot reach the policy server");
  });

  it("on timeout: answers with the fallback, and aborts the hook's signal so it stops its work", async () => {
    let innerSignal: AbortSignal | undefined;
    const failures: unknown[] = [];
    const hook = withFallback(
      (_input, { signal }) => {
        innerSignal = signal;
        return new Promise(() => {});
      },
      { onError: "deny", timeoutMs: 200, onFailure: (e) => failures.push(e) },
    );
    const started = Date.now();
    const result = await hook(preToolUse, context());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.decision).toBe("block");
    expect(failures[0]).toBeInstanceOf(HookTimeoutError);
    expect(innerSignal?.aborted).toBe(true);
  });

  it("on timeout of a command hook: the command is killed", async ({ tmp: dir }) => {
    const file = join(dir, "pid");
    const hook = withFallback(commandHook('echo $$ > "$PIDFILE"; exec sleep 30', { env: { PIDFILE: file } }), {
      onError: "allow",
      timeoutMs: 1_000,
    });
    expect(await hook(preToolUse, context())).toEqual({});
    const pid = Number(await readFile(file, "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(await isGone(pid)).toBe(true);
  });

  it("when the CLI withdraws the request, the hook's error passes through and nothing is reported", async () => {
    const abort = new AbortController();
    const failures: unknown[] = [];
    const hook = withFallback(
      (_input, { signal }) => new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true })),
      { onError: "deny", onFailure: (e) => failures.push(e) },
    );
    const running = hook(preToolUse, context(abort.signal));
    abort.abort();
    await expect(running).rejects.toThrow("stopped");
    expect(failures).toEqual([]);
  });

  it("a reporter that throws does not change the answer", async () => {
    const hook = withFallback(failing, {
      onError: "deny",
      onFailure: () => {
        throw new Error("logger broke");
      },
    });
    expect((await hook(preToolUse, context())).decision).toBe("block");
  });
});
