// hook_callback on the real CLI: a PreToolUse handler decides whether Bash runs.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HookInput, HookOutput } from "../../src/protocol/index.ts";
import { InvalidControlAnswerError } from "../../src/worker/index.ts";
import { createRehearsal } from "../support/rehearsal.ts";
import { requestsOf, toolResults } from "../support/requests.ts";
import { invalidAnswers, startRehearsedWorker } from "../support/worker.ts";

describe("worker hooks", () => {
  it("a PreToolUse hook denies a Bash command: it does not run and the model is told", async () => {
    const server = await createRehearsal({
      s: [{ tool_use: { name: "Bash", input: { command: "touch hooked.txt" } } }, { text: "ok" }],
    });
    const inputs: HookInput[] = [];
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      // Would allow: the hook alone must stop the command.
      canUseTool: () => ({ behavior: "allow" }),
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              (input) => {
                inputs.push(input);
                return {
                  hookSpecificOutput: {
                    hookEventName: "PreToolUse",
                    permissionDecision: "deny",
                    permissionDecisionReason: "HOOK-SAYS-NO: touching is forbidden",
                  },
                };
              },
            ],
          },
        ],
      },
    });
    await worker.run("touch it");
    expect(existsSync(join(cwd, "hooked.txt"))).toBe(false);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]?.hook_event_name).toBe("PreToolUse");
    expect(inputs[0]?.tool_name).toBe("Bash");
    expect(inputs[0]?.tool_input).toEqual({ command: "touch hooked.txt" });
    const last = requestsOf(server.requests, "s").at(-1);
    expect(toolResults(last).join("\n")).toContain("HOOK-SAYS-NO");
  });

  it("a hook's malformed answer is not sent: the CLI gets an error answer, the tool is blocked, the owner is told", async () => {
    const server = await createRehearsal({
      s: [{ tool_use: { name: "Bash", input: { command: "touch misanswered.txt" } } }, { text: "after" }],
    });
    // A hook written without the types: "maybe" is no permission decision.
    const malformed = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "maybe" } } as unknown as HookOutput;
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      canUseTool: () => ({ behavior: "allow" }),
      hooks: { PreToolUse: [{ hooks: [() => malformed] }] },
    });
    const invalid = invalidAnswers(worker);
    expect((await worker.run("go")).subtype).toBe("success");
    expect(existsSync(join(cwd, "misanswered.txt"))).toBe(false);
    expect(invalid).toEqual([expect.any(InvalidControlAnswerError)]);
    expect(invalid[0]).toMatchObject({ code: "INVALID_CONTROL_ANSWER", message: expect.stringMatching(/hook callback.*hookSpecificOutput/) });
  });

  it("a hook that throws blocks the tool (fails closed) and the worker goes on", async () => {
    const server = await createRehearsal({
      s: [{ tool_use: { name: "Bash", input: { command: "touch broken-guard.txt" } } }, { text: "after" }, { text: "again" }],
    });
    const { worker, cwd } = await startRehearsedWorker(server, "s", {
      canUseTool: () => ({ behavior: "allow" }),
      hooks: {
        PreToolUse: [
          {
            hooks: [
              () => {
                throw new Error("hook bug");
              },
            ],
          },
        ],
      },
    });
    const first = await worker.run("go");
    expect(first.subtype).toBe("success");
    expect(existsSync(join(cwd, "broken-guard.txt"))).toBe(false);
    const second = await worker.run("and again");
    expect(second.text).toBe("again");
  });
});
