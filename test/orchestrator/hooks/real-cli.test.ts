// The hook actions on the real claude CLI, against the rehearsal server.
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { commandHook, HookCommandError, withFallback } from "../../../src/orchestrator/hooks/index.ts";
import { offlineClaudeEnv } from "../../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../../src/rehearsal/server.ts";
import type { HookCallback } from "../../../src/worker/hooks.ts";
import { Worker } from "../../../src/worker/index.ts";
import { createRehearsal, tempHome } from "../../support/rehearsal.ts";

/** Blocks any Bash command that names blocked.txt, the way a user's hook script would. */
const BLOCK_SCRIPT = `if grep -q 'blocked[.]txt'; then echo 'cadre-test: blocked.txt may not be touched' >&2; exit 2; fi`;

/**
 * Starts a worker whose Bash calls go through `hook`. Permissions are
 * otherwise granted, so any file the hook does not stop gets created.
 */
async function startWorker(server: RehearsalServer, script: string, hook: HookCallback): Promise<{ worker: Worker; cwd: string }> {
  const home = await tempHome("cadre-hooks-e2e-");
  const cwd = join(home, "work");
  await mkdir(cwd);
  const worker = await Worker.start({
    cwd,
    env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(script), home }),
    permissionPolicy: "allow",
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] },
  });
  onTestFinished(async () => {
    await worker.close();
  });
  return { worker, cwd };
}

/** The tool_result block for `toolUseId` in the model's requests, as the CLI sent it. */
function toolResult(server: RehearsalServer, toolUseId: string): { content: unknown; is_error?: boolean } | undefined {
  for (const request of server.requests) {
    for (const message of request.messages) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as { type?: string; tool_use_id?: string }[]) {
        if (block.type === "tool_result" && block.tool_use_id === toolUseId) return block as { content: unknown; is_error?: boolean };
      }
    }
  }
  return undefined;
}

describe("hook actions on the real CLI", () => {
  it("a command hook that exits 2 stops the Bash call, and the model reads its stderr in the tool_result", async () => {
    const server = await createRehearsal({
      block: [
        { tool_use: { id: "toolu_blocked", name: "Bash", input: { command: "touch blocked.txt", description: "touch" } } },
        { tool_use: { id: "toolu_allowed", name: "Bash", input: { command: "touch allowed.txt", description: "touch" } } },
        { text: "done" },
      ],
    });
    const { worker, cwd } = await startWorker(server, "block", commandHook(BLOCK_SCRIPT));
    const result = await worker.run("touch the files");
    expect(result.subtype).toBe("success");

    expect(existsSync(join(cwd, "blocked.txt"))).toBe(false);
    // The same hook let the other call through, so Bash itself was working.
    expect(existsSync(join(cwd, "allowed.txt"))).toBe(true);

    const blocked = toolResult(server, "toolu_blocked");
    expect(blocked?.is_error).toBe(true);
    expect(JSON.stringify(blocked?.content)).toContain("cadre-test: blocked.txt may not be touched");
    expect(server.warnings).toEqual([]);
  });

  it("withFallback deny stops the call when the hook command fails, which the CLI alone would let through", async () => {
    const server = await createRehearsal({
      failing: [{ tool_use: { id: "toolu_guarded", name: "Bash", input: { command: "touch guarded.txt", description: "touch" } } }, { text: "done" }],
    });
    const failures: unknown[] = [];
    const hook = withFallback(commandHook("cat > /dev/null; echo 'policy server unreachable' >&2; exit 1"), {
      onError: "deny",
      onFailure: (error) => failures.push(error),
    });
    const { worker, cwd } = await startWorker(server, "failing", hook);
    await worker.run("touch the file");

    expect(existsSync(join(cwd, "guarded.txt"))).toBe(false);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(HookCommandError);
    const guarded = JSON.stringify(toolResult(server, "toolu_guarded")?.content);
    expect(guarded).toContain("PreToolUse hook failed");
    expect(guarded).toContain("policy server unreachable");
  });
});
