import { z } from "zod";
import type { CliMessage, HookEvent } from "../protocol/index.ts";
import type { HookCallback } from "../worker/hooks.ts";
import type { PermissionDecision, PermissionRequest, WorkerOptions, WorkerState } from "../worker/index.ts";
import type { AgentSpec } from "./compose.ts";
import type { RateLimitState } from "./scheduler/index.ts";
import type { SessionStatus } from "./session.ts";

/** The data of a task, validated when it is submitted. */
export const TaskSpecSchema = z.object({
  /** Shown in events, transcripts and summaries; unique names make transcripts easy to find. */
  name: z.string().min(1).optional(),
  prompt: z.string().min(1, "a task needs a non-empty prompt"),
  /** An agent known to the orchestrator: its prompt, tools and model configure the worker. */
  agent: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  cwd: z.string().min(1).optional(),
  /** The whole task, all attempts included. */
  timeoutMs: z.number().positive().optional(),
  /** No message from the worker for this long stops the attempt. */
  idleTimeoutMs: z.number().positive().optional(),
  /** Further attempts after a transient failure. */
  retries: z.number().int().min(0).optional(),
  priority: z.number().int().optional(),
});

export type TaskSpecData = z.infer<typeof TaskSpecSchema>;

export interface TaskSpec extends TaskSpecData {
  /** Any other worker options for this task (merged over the agent's and the defaults). */
  worker?: Partial<WorkerOptions>;
  signal?: AbortSignal;
}

export type TaskStatus = "succeeded" | "failed" | "cancelled" | "skipped";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export interface TaskResult {
  id: string;
  name: string;
  agent: string | undefined;
  status: TaskStatus;
  /** The final text of the last turn. */
  text: string;
  structuredOutput: unknown;
  /** This task's cost, its children's included. */
  costUsd: number;
  usage: Usage;
  numTurns: number;
  durationMs: number;
  attempts: number;
  sessionId: string | undefined;
  error: { code: string; message: string } | undefined;
}

export interface TaskInfo {
  id: string;
  name: string;
  agent: string | undefined;
  /** The task that spawned this one, if any. */
  parentId: string | undefined;
}

export type OrchestratorEvent =
  | { type: "task_queued"; task: TaskInfo }
  | { type: "task_started"; task: TaskInfo; attempt: number; pid: number | undefined }
  | { type: "task_message"; task: TaskInfo; message: CliMessage }
  | { type: "task_retry"; task: TaskInfo; attempt: number; delayMs: number; error: { code: string; message: string } }
  | { type: "task_finished"; task: TaskInfo; result: TaskResult }
  | { type: "worker_state"; task: TaskInfo; state: WorkerState }
  /** A result was charged: the task's cost so far, and the run's cost and usage. */
  | { type: "cost"; task: TaskInfo; taskUsd: number; totalUsd: number; totalUsage: Usage }
  | { type: "rate_limit"; state: RateLimitState }
  | { type: "budget_exceeded"; spentUsd: number; budgetUsd: number }
  | { type: "permission_request"; task: TaskInfo; requestId: string; request: Omit<PermissionRequest, "signal"> }
  | { type: "permission_settled"; task: TaskInfo; requestId: string }
  | { type: "hook_failed"; task: TaskInfo; event: string; error: { code: string; message: string } }
  | { type: "session_status"; task: TaskInfo; status: SessionStatus };

/** What a routed hook does: a function, a shell command, a built-in policy, or a supervisor agent. */
export type HookAction =
  | { callback: HookCallback }
  | { command: string }
  | { policy: { deny_commands?: string[]; allow_commands?: string[]; deny_tools?: string[] } }
  | { supervisor: string };

export type RoutedHook = HookAction & {
  matcher?: string;
  timeoutMs?: number;
  /** What to answer when the action fails or times out. Default "deny". */
  onError?: "deny" | "allow";
};

/** Decides a worker's permission request; `task` says whose it is. */
export type RoutedPermissionHandler = (request: PermissionRequest, task: TaskInfo) => PermissionDecision | Promise<PermissionDecision>;

/** Which worker a set of worker options is for: a task's attempt, a peer session, or a supervisor. */
export interface WorkerContext {
  kind: "task" | "peer" | "supervisor" | "session";
  /** The task name, or the agent name for peer and supervisor sessions. */
  name: string;
  agent: string | undefined;
}

export interface OrchestratorOptions {
  /** Live task workers at once. Default 4. */
  concurrency?: number;
  /** Per-agent limits on top of the global one. */
  agentLimits?: Record<string, number>;
  /** Stop starting tasks and interrupt running ones once this much is spent. */
  budgetUsd?: number;
  agents?: Record<string, AgentSpec>;
  /** Worker options for every worker. */
  defaults?: Partial<WorkerOptions>;
  /** Per-worker options computed at start (environment, HOME, rehearsal URL, …), merged last. */
  workerOptions?: (context: WorkerContext) => Partial<WorkerOptions>;
  /** One registry of hooks for all workers: event name → routed hooks. */
  hooks?: Partial<Record<HookEvent, RoutedHook[]>>;
  /** Permission requests of every worker; without it each worker's policy (deny) applies. */
  canUseTool?: RoutedPermissionHandler;
  /** Agent name → agents it may reach with ask_peer/tell_peer. Absent: every agent may reach every other. */
  connections?: Record<string, string[]>;
  /** Give workers the built-in "cadre" MCP server (ask_peer, spawn_worker, …). Default: when there are agents. */
  peerTools?: boolean;
  /**
   * Cache-aware fan-out, on by default: of tasks whose workers send the same
   * prompt prefix (same model, agent, tools, MCP servers, working directory),
   * one sends its first prompt at once and the others, started meanwhile,
   * send theirs when its response begins (or `maxWaitMs`, default 5 s, after
   * its request went out), so they read the prefix from the API's cache
   * instead of each writing it. False sends every first prompt at once.
   */
  cacheStagger?: boolean | { maxWaitMs?: number };
  /** Write one JSONL transcript per task here. */
  outDir?: string;
  /** Defaults for tasks that do not set them. */
  retries?: number;
  timeoutMs?: number;
  idleTimeoutMs?: number;
}
