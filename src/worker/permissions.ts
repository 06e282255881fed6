/**
 * Permission decisions for `can_use_tool` requests, the default policy when no
 * handler is set, and typed helpers for the two interactive tools that arrive as
 * permission requests: AskUserQuestion and ExitPlanMode.
 */

export interface PermissionRequest {
  /** The control request's id: unique within the worker. */
  requestId: string;
  toolName: string;
  input: Record<string, unknown>;
  toolUseId: string | undefined;
  /** The CLI's own suggestions for rules that would stop it asking again. */
  suggestions: unknown[];
  blockedPath: string | undefined;
  decisionReason: string | undefined;
  displayName: string | undefined;
  /** For MCP tools: the server that serves the tool. */
  mcpServer: string | undefined;
  agentId: string | undefined;
  /** The whole request as the CLI sent it. */
  raw: Record<string, unknown>;
  /** Aborted when the CLI withdraws the request or the worker dies. */
  signal: AbortSignal;
}

export type PermissionDecision =
  | { behavior: "allow"; updatedInput?: Record<string, unknown>; updatedPermissions?: unknown[] }
  | { behavior: "deny"; message: string; interrupt?: boolean };

export type PermissionHandler = (request: PermissionRequest) => PermissionDecision | Promise<PermissionDecision>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** A can_use_tool request as the CLI sent it, in the shape handlers get. */
export function permissionRequestFrom(
  requestId: string,
  raw: { tool_name: string } & Record<string, unknown>,
  signal: AbortSignal,
): PermissionRequest {
  const mcpServer = raw.mcp_server;
  return {
    requestId,
    toolName: raw.tool_name,
    input: isRecord(raw.input) ? raw.input : {},
    toolUseId: str(raw.tool_use_id),
    suggestions: Array.isArray(raw.permission_suggestions) ? raw.permission_suggestions : [],
    blockedPath: str(raw.blocked_path),
    decisionReason: str(raw.decision_reason),
    displayName: str(raw.display_name),
    // { name, source } on 2.1.330; a plain name in older write-ups.
    mcpServer: str(mcpServer) ?? (isRecord(mcpServer) ? str(mcpServer.name) : undefined),
    agentId: str(raw.agent_id),
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

/** The control_response payload for a decision. The CLI wants updatedInput on every allow. */
export function permissionResponse(decision: PermissionDecision, request: PermissionRequest): Record<string, unknown> {
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
    behavior: "deny",
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
