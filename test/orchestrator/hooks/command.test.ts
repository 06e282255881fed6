import { readFile, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { AbortError } from "../../../src/errors.ts";
import { commandHook, HookCommandError, HookOutputError, HookTimeoutError } from "../../../src/orchestrator/hooks/index.ts";
import { it } from "../../support/fixtures.ts";
import { hookInput } from "../../support/hook-input.ts";
import { isGone } from "../../support/processes.ts";

const context = (signal = new AbortController().signal) => ({ toolUseId: "toolu_1", signal });

const preToolUse = (command: string) =>
  hookInput({
    hook_event_name: "PreToolUse",
    session_id: "s1",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "toolu_1",
  });

/** The error `run` fails with; a test that expected a failure fails if there is none. */
async function errorOf(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the hook to fail, and it answered");
}

async function pids(file: string): Promise<number[]> {
  return (await readFile(file, "utf8")).split(/\s+/).filter(Boolean).map(Number);
}

describe("commandHook: exit codes", () => {
  it("exit 0 with a JSON object on stdout answers with that object, and the command reads the input on stdin", async () => {
    const hook = commandHook(`input=$(cat); case "$input" in *'"command":"rm -rf /"'*) echo '{"decision":"block","reason":"saw rm"}';; esac`);
    expect(await hook(preToolUse("rm -rf /"), context())).toEqual({ decision: "block", reason: "saw rm" });
    expect(await hook(preToolUse("ls"), context())).toEqual({});
  });

  it("exit 0 with plain stdout is context only where Claude Code makes it context", async () => {
    const hook = commandHook("echo remember the milk");
    expect(await hook(preToolUse("ls"), context())).toEqual({});
    expect(await hook(hookInput({ hook_event_name: "UserPromptSubmit", prompt: "hi" }), context())).toEqual({
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "remember the milk" },
    });
    expect(await hook(hookInput({ hook_event_name: "SessionStart", source: "startup" }), context())).toEqual({
      hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "remember the milk" },
    });
  });

  it("exit 2 on PreToolUse denies the call with stderr as the reason", async () => {
    const hook = commandHook("echo 'no rm here' >&2; exit 2");
    expect(await hook(preToolUse("rm x"), context())).toEqual({
      decision: "block",
      reason: "no rm here",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm here" },
    });
  });

  it("exit 2 on other events uses their blocking form", async () => {
    const hook = commandHook("echo 'tests fail' >&2; exit 2");
    expect(await hook(hookInput({ hook_event_name: "Stop", stop_hook_active: false }), context())).toEqual({
      decision: "block",
      reason: "tests fail",
    });
    expect(await hook(hookInput({ hook_event_name: "UserPromptSubmit", prompt: "x" }), context())).toEqual({
      decision: "block",
      reason: "tests fail",
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", suppressOriginalPrompt: true },
    });
    expect(await hook(hookInput({ hook_event_name: "PermissionRequest", tool_name: "Bash" }), context())).toEqual({
      decision: "block",
      reason: "tests fail",
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "tests fail" } },
    });
  });

  it("exit 2 without stderr still gives a reason that names the command", async () => {
    const result = await commandHook("exit 2")(preToolUse("x"), context());
    expect(result.reason).toContain("`exit 2`");
    expect(result.reason).toContain("exit code 2");
  });

  it("exit 2 ignores stdout, even JSON that would allow", async () => {
    const hook = commandHook(`echo '{"decision":"approve"}'; echo blocked >&2; exit 2`);
    expect((await hook(preToolUse("x"), context())).decision).toBe("block");
  });

  it("any other exit is a non-blocking error carrying the exit code and stderr", async ({ tmp: dir }) => {
    const error = await errorOf(() => commandHook("echo 'linter crashed' >&2; exit 1")(preToolUse("x"), context()));
    expect(error).toBeInstanceOf(HookCommandError);
    const failed = error as HookCommandError;
    expect(failed.code).toBe("HOOK_COMMAND_FAILED");
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toBe("linter crashed");
    expect(failed.message).toContain("exited with code 1");
    expect(failed.message).toContain("linter crashed");

    const missing = await errorOf(() => commandHook("/nonexistent/hook-script")(preToolUse("x"), context()));
    expect(missing).toBeInstanceOf(HookCommandError);
    expect((missing as HookCommandError).exitCode).toBe(127);

    const nowhere = await errorOf(() => commandHook("true", { cwd: join(dir, "missing") })(preToolUse("x"), context()));
    expect(nowhere).toBeInstanceOf(HookCommandError);
    expect((nowhere as Error).message).toContain(`could not be started in ${join(dir, "missing")}`);
  });

  it("exit 0 with output that is not valid hook JSON is an error, not a silent pass", async () => {
    const broken = await errorOf(() => commandHook("echo '{not json'")(preToolUse("x"), context()));
    expect(broken).toBeInstanceOf(HookOutputError);
    expect((broken as Error).message).toContain("{not json");

    const badDecision = await errorOf(() => commandHook(`echo '{"decision":"deny"}'`)(preToolUse("x"), context()));
    expect(badDecision).toBeInstanceOf(HookOutputError);
    expect((badDecision as Error).message).toContain("decision");

    const otherEvent = await errorOf(() => commandHook(`echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}'`)(preToolUse("x"), context()));
    expect(otherEvent).toBeInstanceOf(HookOutputError);
    expect((otherEvent as Error).message).toContain('"PostToolUse" but it ran for "PreToolUse"');
  });
});

describe("commandHook: where and how it runs", () => {
  it("runs in the session's cwd from the input by default, or in options.cwd, with CLAUDE_PROJECT_DIR and env set", async ({ tmp: dir }) => {
    const show = commandHook('printf "%s|%s|%s" "$(pwd)" "$CLAUDE_PROJECT_DIR" "$EXTRA"', { env: { EXTRA: "x1" } });
    const result = await show(hookInput({ hook_event_name: "UserPromptSubmit", cwd: dir }), context());
    expect(result.hookSpecificOutput).toMatchObject({ additionalContext: `${dir}|${dir}|x1` });

    const elsewhere = commandHook("pwd", { cwd: tmpdir() });
    const other = await elsewhere(hookInput({ hook_event_name: "UserPromptSubmit", cwd: dir }), context());
    expect(other.hookSpecificOutput).toMatchObject({ additionalContext: await realpath(tmpdir()) });
  });

  it("takes large input on stdin, and a command that ignores stdin still works", async () => {
    const big = preToolUse("x".repeat(2_000_000));
    const counted = await commandHook("wc -c")({ ...big, hook_event_name: "UserPromptSubmit" }, context());
    expect(Number((counted.hookSpecificOutput as { additionalContext: string }).additionalContext)).toBeGreaterThan(2_000_000);
    const ignored = await commandHook("echo ignored >&2; exit 2")(big, context());
    expect(ignored.reason).toBe("ignored");
  });
});

describe("commandHook: no process is left behind", () => {
  it("kills the command and its children on timeout", async ({ tmp: dir }) => {
    const file = join(dir, "pids");
    const hook = commandHook('sleep 30 & echo $! > "$PIDS"; echo $$ >> "$PIDS"; sleep 30', { env: { PIDS: file }, timeoutMs: 1_000 });
    const started = Date.now();
    const error = await errorOf(() => hook(preToolUse("x"), context()));
    expect(error).toBeInstanceOf(HookTimeoutError);
    expect((error as HookTimeoutError).code).toBe("HOOK_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(10_000);
    const started_pids = await pids(file);
    expect(started_pids).toHaveLength(2);
    for (const pid of started_pids) expect(await isGone(pid)).toBe(true);
  });

  it("kills the command and its children when the signal aborts", async ({ tmp: dir }) => {
    const file = join(dir, "pids");
    const hook = commandHook('sleep 30 & echo $! > "$PIDS"; echo $$ >> "$PIDS"; sleep 30', { env: { PIDS: file } });
    const abort = new AbortController();
    const running = errorOf(() => hook(preToolUse("x"), context(abort.signal)));
    // Abort once the command has written its pids, so they can be checked.
    await expect.poll(async () => (await pids(file).catch(() => [])).length, { timeout: 5_000 }).toBe(2);
    const aborted = Date.now();
    abort.abort(new Error("the CLI withdrew the request"));
    const error = await running;
    expect(error).toBeInstanceOf(AbortError);
    expect(Date.now() - aborted).toBeLessThan(10_000);
    for (const pid of await pids(file)) expect(await isGone(pid)).toBe(true);
  });

  it("does not start the command when the signal is already aborted", async ({ tmp: dir }) => {
    const file = join(dir, "ran");
    const abort = new AbortController();
    abort.abort();
    const error = await errorOf(() => commandHook('touch "$F"', { env: { F: file } })(preToolUse("x"), context(abort.signal)));
    expect(error).toBeInstanceOf(AbortError);
    await expect(readFile(file)).rejects.toThrow();
  });

  it("ends what the command left running in the background once it exits, without waiting for it", async ({ tmp: dir }) => {
    const file = join(dir, "pids");
    const started = Date.now();
    const result = await commandHook('sleep 30 & echo $! > "$PIDS"; echo done >&2; exit 2', { env: { PIDS: file } })(preToolUse("x"), context());
    expect(result.reason).toBe("done");
    expect(Date.now() - started).toBeLessThan(10_000);
    const [pid] = await pids(file);
    expect(await isGone(pid!)).toBe(true);
  });
});
