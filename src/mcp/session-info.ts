// What the tools say about a session: structured content and the short text a model reads, long texts cut.
import { z } from "zod";
import { type PendingPermission, SESSION_STATUSES } from "../orchestrator/index.ts";
import { clip } from "../util/one-line.ts";
import { askUserQuestion, type BackgroundTask, planReview } from "../worker/index.ts";
import type { ManagedSession } from "./managed-session.ts";

/**
 * What the tools say about a session, as structuredContent (SessionInfoSchema)
 * and as the short text a model reads. Long texts are cut so that one tool
 * result cannot flood the parent's context.
 */

const MAX_RESULT_CHARS = 20_000;
const MAX_INPUT_STRING_CHARS = 2_000;

export const PendingPermissionSchema = z.object({
  request_id: z.string(),
  kind: z.enum(["tool", "question", "plan"]).describe("tool: a tool call to allow or deny; question: AskUserQuestion; plan: ExitPlanMode"),
  tool_name: z.string(),
  input: z.record(z.string(), z.unknown()).describe("the tool's input; long strings are shortened"),
  waiting_s: z.number(),
  asking_user: z.boolean().optional().describe("the client's user is being asked (MCP elicitation); answer_permission still answers it"),
});

export const BackgroundTaskInfoSchema = z.object({
  task_id: z.string(),
  kind: z.string().describe("local_workflow, local_agent, local_bash, monitor, …"),
  description: z.string(),
  status: z.string().describe("running, completed, failed or stopped"),
  tokens: z.number().optional(),
  tool_uses: z.number().optional(),
  agents: z
    .array(z.object({ label: z.string().optional(), phase: z.string().optional(), state: z.string(), tokens: z.number().optional() }))
    .optional()
    .describe("a workflow's agents"),
  summary: z.string().optional(),
});
export type BackgroundTaskInfo = z.infer<typeof BackgroundTaskInfoSchema>;

export function backgroundTaskInfo(task: BackgroundTask): BackgroundTaskInfo {
  return {
    task_id: task.id,
    kind: task.kind,
    description: task.description,
    status: task.status,
    ...(task.usage && { tokens: task.usage.totalTokens, tool_uses: task.usage.toolUses }),
    ...(task.agents && {
      agents: task.agents.map((agent) => ({ label: agent.label, phase: agent.phase, state: agent.state, tokens: agent.tokens })),
    }),
    ...(task.summary !== undefined && { summary: clip(task.summary, MAX_INPUT_STRING_CHARS) }),
  };
}

/** One line per background task. */
export function renderBackgroundTasks(tasks: readonly BackgroundTaskInfo[]): string[] {
  return tasks.map((task) => {
    const agents = task.agents ? `, agents ${task.agents.filter((agent) => agent.state === "done").length}/${task.agents.length} done` : "";
    const tokens = task.tokens === undefined ? "" : `, ${task.tokens} tokens`;
    return `  ${task.task_id} ${task.kind} "${task.description}": ${task.status}${tokens}${agents}`;
  });
}

export const SessionInfoSchema = z.object({
  session_id: z.string(),
  name: z.string(),
  agent: z.string().optional(),
  status: z.enum(SESSION_STATUSES),
  turns: z.number(),
  permission_mode: z.string().optional().describe("the child's permission mode in effect; set_permission_mode changes it"),
  cost_usd: z.number(),
  result: z.string().optional().describe("final text of the last finished turn"),
  error: z.string().optional().describe("why the last turn failed"),
  pending_permissions: z.array(PendingPermissionSchema).optional(),
  closed_reason: z.string().optional(),
  background_tasks: z
    .array(BackgroundTaskInfoSchema)
    .optional()
    .describe("work the child runs in the background; its turn ends only when all of it has, with the turn that reports it"),
});

export type SessionInfo = z.infer<typeof SessionInfoSchema>;
export type PendingPermissionInfo = z.infer<typeof PendingPermissionSchema>;

/** Long strings inside a tool input are shortened; the structure stays. */
function clipDeep(value: unknown): unknown {
  if (typeof value === "string") return clip(value, MAX_INPUT_STRING_CHARS);
  if (Array.isArray(value)) return value.map(clipDeep);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clipDeep(item)]));
  }
  return value;
}

function pendingInfo(session: ManagedSession, pending: PendingPermission): PendingPermissionInfo {
  return {
    request_id: pending.requestId,
    kind: pending.kind,
    tool_name: pending.toolName,
    input: clipDeep(pending.input) as Record<string, unknown>,
    waiting_s: Math.round((Date.now() - pending.since) / 1000),
    ...(session.isAskingUser(pending.requestId) && { asking_user: true }),
  };
}

export function sessionInfo(session: ManagedSession): SessionInfo {
  const result = session.result;
  const error = session.error;
  const pending = session.pending;
  const costUsd = session.session.costUsd;
  const background = session.session.backgroundTasks;
  return {
    session_id: session.id,
    name: session.name,
    ...(session.agent !== undefined && { agent: session.agent }),
    status: session.status,
    turns: session.session.turns,
    ...(session.session.permissionMode !== undefined && { permission_mode: session.session.permissionMode }),
    cost_usd: Math.round(costUsd * 1e6) / 1e6,
    ...(result && !result.isError && { result: clip(result.text, MAX_RESULT_CHARS, "; see get_transcript") }),
    ...(error && { error: error.message }),
    ...(pending.length > 0 && { pending_permissions: pending.map((p) => pendingInfo(session, p)) }),
    ...(session.closedReason !== undefined && session.status === "closed" && { closed_reason: session.closedReason }),
    ...(background.length > 0 && { background_tasks: background.map(backgroundTaskInfo) }),
  };
}

function describePending(p: PendingPermissionInfo): string {
  const head = `  request ${p.request_id}${p.asking_user ? " (the user is being asked too)" : ""}`;
  if (p.kind === "question") {
    const questions = askUserQuestion.questions({ input: p.input }).map((q) => {
      const options = (q.options ?? []).map((o) => o.label).join(" | ");
      return `    "${q.question}"${q.multiSelect ? " (several allowed)" : ""}: ${options}`;
    });
    return `${head}: the child asks (answer with answers keyed by question):\n${questions.join("\n")}`;
  }
  if (p.kind === "plan") {
    const plan = planReview.plan({ input: p.input });
    const shown = plan === undefined ? "(the plan is in the child's plan file; see get_transcript)" : clip(plan, 4_000);
    return `${head}: the child asks to approve its plan (allow = approve, deny + message = revise, deny + interrupt = reject):\n${shown}`;
  }
  return `${head}: ${p.tool_name} ${clip(JSON.stringify(p.input), 1_000)}`;
}

/** A few lines a model can act on. */
export function renderInfo(info: SessionInfo): string {
  const label = info.name === `task-${info.session_id}` ? `session ${info.session_id}` : `session ${info.session_id} (${info.name})`;
  const mode = info.permission_mode === undefined ? "" : `, permission mode ${info.permission_mode}`;
  const lines = [`${label}: ${info.status}, ${info.turns} turn${info.turns === 1 ? "" : "s"}${mode}, $${info.cost_usd.toFixed(4)}`];
  if (info.closed_reason) lines.push(`closed: ${info.closed_reason}`);
  if (info.error) lines.push(`error: ${info.error}`);
  if (info.pending_permissions) {
    lines.push("waiting for answer_permission:", ...info.pending_permissions.map(describePending));
  }
  if (info.background_tasks) lines.push("background tasks:", ...renderBackgroundTasks(info.background_tasks));
  if (info.result !== undefined) lines.push(`result:\n${info.result}`);
  return lines.join("\n");
}
