// The host requests a parent sends a child's process: set_permission_mode, get_usage, get_context_usage, rename_session.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { PERMISSION_MODES } from "../../worker/index.ts";
import { SessionClosedError } from "../errors.ts";
import type { ManagedSession } from "../managed-session.ts";
import { SessionInfoSchema } from "../session-info.ts";
import { infoResult, ok, SessionIdSchema, type ToolContext } from "./common.ts";

export const UsageResultSchema = z.object({
  session_id: z.string(),
  subscription_type: z.string().optional().describe("the account's plan, when the CLI knows it"),
  rate_limits_available: z.boolean(),
  rate_limits: z.unknown().optional().describe("the plan's rate limits and how much of each is used, as the CLI reports them"),
});
export type UsageResult = z.infer<typeof UsageResultSchema>;

export const ContextUsageResultSchema = z.object({
  session_id: z.string(),
  total_tokens: z.number(),
  max_tokens: z.number(),
  percentage: z.number().describe("of the context window in use"),
  model: z.string().optional(),
  categories: z.array(z.object({ name: z.string(), tokens: z.number(), kind: z.string().optional() })),
});
export type ContextUsageResult = z.infer<typeof ContextUsageResultSchema>;

export const RenameResultSchema = z.object({ session_id: z.string(), title: z.string() });

/** A session whose process can still be asked: a closed one says to spawn anew. */
function openSession(context: ToolContext, id: string): ManagedSession {
  const session = context.registry.find(context.owner, id);
  if (session.status === "closed") throw new SessionClosedError(session.id);
  return session;
}

/** get_usage's answer: the plan and its rate limits, as the child's CLI reports them. */
async function usageResult(session: ManagedSession): Promise<CallToolResult> {
  const answer = await session.session.usage();
  const result: UsageResult = {
    session_id: session.id,
    ...(typeof answer.subscription_type === "string" && { subscription_type: answer.subscription_type }),
    rate_limits_available: answer.rate_limits_available ?? false,
    ...(answer.rate_limits !== undefined && answer.rate_limits !== null && { rate_limits: answer.rate_limits }),
  };
  const plan = result.subscription_type ?? "unknown plan";
  const limits = result.rate_limits_available ? JSON.stringify(result.rate_limits) : "rate limits not available";
  return ok(result, `session ${session.id}: ${plan}; ${limits}`);
}

/** get_context_usage's answer: the context window's tokens in use, in all and by category. */
async function contextUsageResult(session: ManagedSession): Promise<CallToolResult> {
  const usage = await session.session.contextUsage();
  const result: ContextUsageResult = {
    session_id: session.id,
    total_tokens: usage.totalTokens,
    max_tokens: usage.maxTokens,
    percentage: usage.percentage,
    ...(usage.model !== undefined && { model: usage.model }),
    categories: usage.categories.map(({ name, tokens, kind }) => ({ name, tokens, ...(kind !== undefined && { kind }) })),
  };
  return ok(result, renderContextUsage(result));
}

function renderContextUsage(result: ContextUsageResult): string {
  const used = result.categories.filter((category) => category.tokens > 0 && category.kind !== "free");
  const lines = used.map((category) => `  ${category.name}: ${category.tokens}`);
  const head = `session ${result.session_id}: ${result.total_tokens} of ${result.max_tokens} context tokens (${result.percentage}%)`;
  return [`${head}${result.model ? `, ${result.model}` : ""}`, ...lines].join("\n");
}

/** set_permission_mode, get_usage, get_context_usage and rename_session: requests to a child's live process. */
export function registerProcessTools(server: McpServer, context: ToolContext): void {
  server.registerTool(
    "set_permission_mode",
    {
      title: "Change a child's permission mode",
      description:
        "Change the permission mode of a child session's process, e.g. plan (it plans, edits nothing) or acceptEdits. " +
        "Holds from its next tool call; the answer's permission_mode is the mode the child's CLI says is in effect.",
      inputSchema: { session_id: SessionIdSchema, mode: z.enum(PERMISSION_MODES) },
      outputSchema: SessionInfoSchema,
    },
    async ({ session_id, mode }) => {
      const session = openSession(context, session_id);
      await session.session.setPermissionMode(mode);
      return infoResult(session);
    },
  );

  server.registerTool(
    "get_usage",
    {
      title: "Read the plan's usage",
      description: "The account's plan and its rate limits (how much of each is used), as a child session's CLI reports them.",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: UsageResultSchema,
      annotations: { readOnlyHint: true },
    },
    ({ session_id }) => usageResult(openSession(context, session_id)),
  );

  server.registerTool(
    "get_context_usage",
    {
      title: "Read how full a child's context is",
      description: "How many tokens of its context window a child session uses, in all and by category (system prompt, tools, messages, …).",
      inputSchema: { session_id: SessionIdSchema },
      outputSchema: ContextUsageResultSchema,
      annotations: { readOnlyHint: true },
    },
    ({ session_id }) => contextUsageResult(openSession(context, session_id)),
  );

  server.registerTool(
    "rename_session",
    {
      title: "Title a child's transcript",
      description:
        "Set the title the child's CLI keeps for its session (what Claude Code's session list and resume show). The session's name in cadre stays.",
      inputSchema: { session_id: SessionIdSchema, title: z.string().trim().min(1).max(200) },
      outputSchema: RenameResultSchema,
      annotations: { idempotentHint: true },
    },
    async ({ session_id, title }) => {
      const session = openSession(context, session_id);
      await session.session.rename(title);
      return ok({ session_id: session.id, title }, `session ${session.id} is titled "${title}"`);
    },
  );
}
