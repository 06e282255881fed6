import { describe, expect, it } from "vitest";
import { HookPolicyError, policyHook } from "../../../src/orchestrator/hooks/index.ts";
import type { HookInput, HookOutput } from "../../../src/protocol/index.ts";
import { hookInput } from "../../support/hook-input.ts";

const context = { toolUseId: "toolu_1", signal: new AbortController().signal };

function call(tool: string, toolInput: Record<string, unknown> = {}, event = "PreToolUse"): HookInput {
  return hookInput({ hook_event_name: event, tool_name: tool, tool_input: toolInput, tool_use_id: "toolu_1" });
}
const bash = (command: string) => call("Bash", { command });

function reasonOf(result: HookOutput): string | undefined {
  const specific = result.hookSpecificOutput as { permissionDecision?: string; permissionDecisionReason?: string } | undefined;
  return specific?.permissionDecision === "deny" ? specific.permissionDecisionReason : undefined;
}

describe("policyHook", () => {
  it("denies Bash commands matching deny_commands, naming the rule, and has no opinion on the rest", async () => {
    const hook = policyHook({ deny_commands: ["^git push", "rm\\s+-rf"] });
    const denied = await hook(bash("cd /x && rm  -rf build"), context);
    expect(denied.decision).toBe("block");
    expect(reasonOf(denied)).toContain('deny_commands[1] "rm\\\\s+-rf"');
    expect(await hook(bash("git status"), context)).toEqual({});
    expect(await hook(bash("echo git push"), context)).toEqual({});
  });

  it("with allow_commands, denies Bash commands that match none of them", async () => {
    const hook = policyHook({ allow_commands: ["^npm (test|run lint)$", "^ls\\b"] });
    expect(await hook(bash("npm test"), context)).toEqual({});
    expect(await hook(bash("ls -la"), context)).toEqual({});
    const denied = await hook(bash("curl http://example.com"), context);
    expect(reasonOf(denied)).toContain("matches no allow_commands pattern");
    expect(reasonOf(denied)).toContain('allow_commands[0] "^npm (test|run lint)$"');
  });

  it("deny_commands wins over allow_commands", async () => {
    const hook = policyHook({ allow_commands: ["^git "], deny_commands: ["^git push --force"] });
    expect(await hook(bash("git log"), context)).toEqual({});
    expect(reasonOf(await hook(bash("git push --force origin main"), context))).toContain("deny_commands[0]");
  });

  it("command rules judge only Bash calls", async () => {
    const hook = policyHook({ deny_commands: ["rm"], allow_commands: ["^ls$"] });
    expect(await hook(call("Write", { file_path: "/tmp/rm", content: "rm" }), context)).toEqual({});
    expect(await hook(call("Bash", {}), context)).toEqual({});
  });

  it("deny_tools takes exact names, A|B lists and regular expressions, as Claude Code's matchers do", async () => {
    const hook = policyHook({ deny_tools: ["WebFetch", "Write|Edit", "^mcp__github__.*", "Bash"] });
    for (const tool of ["WebFetch", "Write", "Edit", "mcp__github__create_issue", "Bash"]) {
      const result = await hook(call(tool), context);
      expect(reasonOf(result), tool).toContain(`denies the tool ${tool}`);
    }
    expect(reasonOf(await hook(call("Edit"), context))).toContain('deny_tools[1] "Write|Edit"');
    // Exact names are exact: Bash does not deny BashOutput, Write does not deny NotebookWrite.
    for (const tool of ["BashOutput", "NotebookWrite", "Read", "mcp__gitlab__x"]) {
      expect(await hook(call(tool), context), tool).toEqual({});
    }
    expect(reasonOf(await policyHook({ deny_tools: ["*"] })(call("Read"), context))).toContain("Read");
  });

  it("has no opinion on events other than PreToolUse", async () => {
    const hook = policyHook({ deny_tools: ["Bash"], deny_commands: ["."] });
    expect(await hook(call("Bash", { command: "rm" }, "PostToolUse"), context)).toEqual({});
    expect(await hook(call("Bash", { command: "rm" }, "PermissionRequest"), context)).toEqual({});
    expect(await hook(hookInput({ hook_event_name: "UserPromptSubmit", prompt: "rm" }), context)).toEqual({});
  });

  it("rejects an invalid regular expression when it is built, naming the rule and the pattern", () => {
    for (const [policy, rule, pattern] of [
      [{ deny_commands: ["ok", "rm ("] }, "deny_commands[1]", "rm ("],
      [{ allow_commands: ["[a-"] }, "allow_commands[0]", "[a-"],
      [{ deny_tools: ["mcp__(x"] }, "deny_tools[0]", "mcp__(x"],
    ] as const) {
      let error: unknown;
      try {
        policyHook(policy);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HookPolicyError);
      expect((error as HookPolicyError).code).toBe("HOOK_POLICY_INVALID");
      expect((error as Error).message).toContain(rule);
      expect((error as Error).message).toContain(JSON.stringify(pattern));
    }
  });
});
