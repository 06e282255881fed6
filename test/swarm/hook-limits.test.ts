// A hook's timeout_s is its one limit: cadre's timer decides (hook_failed, on_error), and no
// other timer (the worker's wait for the callback, the CLI's own) cuts it shorter.
// The real CLI, the built `cadre run`, the rehearsal server.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bin, readSummary, repo } from "../support/cli.ts";
import { isGone } from "../support/processes.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-hook-limits-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs one task whose Bash call (touching `marker`) waits on a PreToolUse hook command of `seconds` with `timeout_s`;
 * the hook's shell writes its pid first.
 */
async function runGuarded(name: string, seconds: number, timeoutS: number) {
  const marker = join(dir, `${name}.ran`);
  const hookDone = join(dir, `${name}.hook-done`);
  const hookPid = join(dir, `${name}.hook-pid`);
  const file = join(dir, `${name}.yaml`);
  const yaml = {
    defaults: { allowed_tools: ["Bash"] },
    hooks: {
      PreToolUse: [
        { matcher: "Bash", command: `echo $$ > ${hookPid} && sleep ${seconds} && touch ${hookDone}`, timeout_s: timeoutS, on_error: "deny" },
      ],
    },
    tasks: [{ name: "guarded", prompt: "touch the marker" }],
    rehearsal: {
      guarded: [{ tool_use: { id: "toolu_marker", name: "Bash", input: { command: `touch ${marker}`, description: "touch" } } }, { text: "done" }],
    },
  };
  await writeFile(file, JSON.stringify(yaml));
  const out = join(dir, `${name}-out`);
  const started = Date.now();
  const run = await execa("node", [bin, "run", file, "--rehearse", "--json", "--out", out], { cwd: repo, reject: false });
  const events = run.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; error?: { code: string; message: string } });
  return {
    run,
    events,
    elapsedMs: Date.now() - started,
    ran: existsSync(marker),
    hookDone: existsSync(hookDone),
    hookPid: Number(await readFile(hookPid, "utf8")),
    summary: await readSummary(out),
  };
}

describe("a hook's timeout_s", () => {
  it("a hook command of 65 s with timeout_s: 90 is waited for, and the tool runs after it", { timeout: 150_000 }, async () => {
    const { run, events, elapsedMs, ran, hookDone, summary } = await runGuarded("slow-allowed", 65, 90);
    expect(hookDone).toBe(true);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(events.filter((event) => event.type === "hook_failed")).toEqual([]);
    expect(ran).toBe(true);
    expect(elapsedMs).toBeGreaterThan(65_000);
    expect(summary.tasks[0]?.status).toBe("succeeded");
  });

  it("a hook command of 5 s with timeout_s: 2 fails after about 2 s: hook_failed, and on_error deny stops the tool", {
    timeout: 60_000,
  }, async () => {
    const { events, ran, hookDone, hookPid, summary } = await runGuarded("fast-limit", 5, 2);
    // Stopped at its limit, before its 5 s were up, and not left running: its shell is gone, so its touch never comes.
    expect(hookDone).toBe(false);
    expect(await isGone(hookPid)).toBe(true);
    const failed = events.filter((event) => event.type === "hook_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ event: "PreToolUse", error: { code: "HOOK_TIMEOUT" } });
    expect(failed[0]?.error?.message).toMatch(/2000 ms|2 s/);
    expect(ran).toBe(false);
    // The model read the on_error answer as the tool's result and finished its turn.
    expect(summary.tasks[0]?.status).toBe("succeeded");
  });
});
