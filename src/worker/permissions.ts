/**
 * Permission decisions for `can_use_tool` requests, the default policy when no
 * handler is set, and typed helpers for the two interactive tools that arrive as
 * permission requests: AskUserQuestion and ExitPlanMode.
 */
import type { CanUseToolRequest, PermissionAllow, PermissionDeny, PermissionResult, PermissionUpdate } from "../protocol/index.ts";

export interface PermissionRequest {
  /** The control request's id: unique within the worker. */
  requestId: string;
  toolName: string;
  input: Record<string, unknown>;
  toolUseId: string | undefined;
  /** The CLI's own suggestions for rules that would stop it asking again. */
  suggestions: PermissionUpdate[];
  blockedPath: string | undefined;
  decisionReason: string | undefined;
  displayName: string | undefined;
  /** For MCP tools: the server that serves the tool. */
  mcpServer: string | undefined;
  agentId: string | undefined;
  /** The whole request as the CLI sent it. */
  raw: CanUseToolRequest;
  /** Aborted when the CLI withdraws the request or the worker dies. */
  signal: AbortSignal;
}

/** A handler's decision: a PermissionResult without what cadre fills in (toolUseID; on allow, the unchanged input). */
export type PermissionDecision =
  | Pick<PermissionAllow, "behavior" | "updatedInput" | "updatedPermissions">
  | Pick<PermissionDeny, "behavior" | "message" | "interrupt">;

export type PermissionHandler = (request: PermissionRequest) => PermissionDecision | Promise<PermissionDecision>;

/** A can_use_tool request as the CLI sent it, in the shape handlers get. */
export function permissionRequestFrom(requestId: string, raw: CanUseToolRequest, signal: AbortSignal): PermissionRequest {
  return {
    requestId,
    toolName: raw.tool_name,
    input: raw.input,
    toolUseId: raw.tool_use_id,
    suggestions: raw.permission_suggestions ?? [],
    blockedPath: raw.blocked_path,
    decisionReason: raw.decision_reason,
    displayName: raw.display_name,
    mcpServer: raw.mcp_server?.name,
    agentId: raw.agent_id,
    raw,
    signal,
  };
}

/** What happens to a permission request when no handler is set: "deny" unless the owner chose "allow". */
export type PermissionPolicy = "deny" | "allow";

export function policyDecision(policy: PermissionPolicy, toolName: string): PermissionDecision {
  if (policy === "allow") return { behavior: "allow" };
  return {
    behavior: "deny",
    message:
      `cadre denied ${toolName}: this worker has no permission handler and its policy is "deny". ` +
      `Allow the tool with allowedTools or a permission mode, or give the worker a canUseTool handler.`,
  };
}

/**
 * The control_response payload for a decision. The CLI wants updatedInput on every allow.
 * A behavior other than allow is copied as it is, so that a handler's typo fails the check
 * of the answer instead of passing for a deny.
 */
export function permissionResponse(decision: PermissionDecision, request: PermissionRequest): PermissionResult {
  const toolUseID = request.toolUseId;
  if (decision.behavior === "allow") {
    return {
      behavior: "allow",
      updatedInput: decision.updatedInput ?? request.input,
      ...(decision.updatedPermissions && { updatedPermissions: decision.updatedPermissions }),
      ...(toolUseID && { toolUseID }),
    };
  }
  return {
    behavior: decision.behavior,
    message: decision.message,
    ...(decision.interrupt && { interrupt: true }),
    ...(toolUseID && { toolUseID }),
  };
}

export interface Question {
  question: string;
  header?: string;
  options: { label: string; description?: string }[];
  multiSelect?: boolean;
}

/** Helpers for AskUserQuestion, which reaches the host as a permission request. */
export const askUserQuestion = {
  matches(request: Pick<PermissionRequest, "toolName">): boolean {
    return request.toolName === "AskUserQuestion";
  },

  questions(request: Pick<PermissionRequest, "input">): Question[] {
    const questions = request.input.questions;
    return Array.isArray(questions) ? (questions as Question[]) : [];
  },

  /**
   * Answers keyed by question text; a multi-select answer may be a list of
   * labels (the CLI wants them comma-separated).
   */
  answer(request: Pick<PermissionRequest, "input">, answers: Record<string, string | string[]>): PermissionDecision {
    const known = new Set(askUserQuestion.questions(request).map((q) => q.question));
    const unknown = Object.keys(answers).filter((q) => !known.has(q));
    if (unknown.length > 0) {
      throw new Error(`no question "${unknown[0]}" was asked; the questions are: ${[...known].map((q) => `"${q}"`).join(", ")}`);
    }
    const flat = Object.fromEntries(
      Object.entries(answers).map(([question, answer]) => [question, Array.isArray(answer) ? answer.join(", ") : answer]),
    );
    return { behavior: "allow", updatedInput: { ...request.input, answers: flat } };
  },

  skip(message = "The user skipped the question."): PermissionDecision {
    return { behavior: "deny", message };
  },
};

/** Helpers for ExitPlanMode, the plan review that reaches the host as a permission request. */
export const planReview = {
  matches(request: Pick<PermissionRequest, "toolName">): boolean {
    return request.toolName === "ExitPlanMode";
  },

  /**
   * The plan text, when the request carries it. Claude 2.1.330 keeps the plan
   * in a plan file and sends ExitPlanMode with an empty input, so this is
   * undefined there; the plan is in the transcript's preceding Write.
   */
  plan(request: Pick<PermissionRequest, "input">): string | undefined {
    return typeof request.input.plan === "string" ? request.input.plan : undefined;
  },

  approve(): PermissionDecision {
    return { behavior: "allow" };
  },

  /** Keeps the agent in plan mode with feedback to revise the plan. */
  revise(message: string): PermissionDecision {
    return { behavior: "deny", message };
  },

  /** Rejects the plan and ends the turn. */
  reject(message = "The user rejected the plan."): PermissionDecision {
    return { behavior: "deny", message, interrupt: true };
  },
};
