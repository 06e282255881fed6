import { describe, expect, it } from "vitest";
import { allowResult, denyResult, noOpinion } from "../../../src/orchestrator/hooks/index.ts";

describe("decision shapes", () => {
  it("denyResult gives each event the form the CLI blocks on", () => {
    expect(denyResult("PreToolUse", "no")).toEqual({
      decision: "block",
      reason: "no",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" },
    });
    expect(denyResult("PermissionRequest", "no")).toEqual({
      decision: "block",
      reason: "no",
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "no" } },
    });
    expect(denyResult("UserPromptExpansion", "no")).toEqual({
      decision: "block",
      reason: "no",
      hookSpecificOutput: { hookEventName: "UserPromptExpansion", suppressOriginalPrompt: true },
    });
    expect(denyResult("SubagentStop", "keep going")).toEqual({ decision: "block", reason: "keep going" });
  });

  it("allowResult approves where the event has an approval, and is no opinion elsewhere", () => {
    expect(allowResult("PreToolUse", "vetted")).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "vetted" },
    });
    expect(allowResult("PreToolUse")).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    expect(allowResult("PermissionRequest")).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    expect(allowResult("Stop")).toEqual({});
    expect(noOpinion()).toEqual({});
  });
});
