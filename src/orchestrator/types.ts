// The orchestrator's public shapes: tasks, agents, sessions, results, usage and events, zod schemas where records keep them.
import { z } from "zod";
import type { AgentDefinition, CliMessage, HookEvent } from "../protocol/index.ts";
import {
  type BackgroundTask,
  BackgroundTaskSchema,
  type HookCallback,
  type PermissionDecision,
  type PermissionRequest,
  type WorkerOptions,
  type WorkerState,
} from "../worker/index.ts";
import type { HookPolicy } from "./hooks/policy.ts";
import type { InboxStore } from "./peers/inbox.ts";
import type { MachineProbe, RateLimitState } from "./scheduler/index.ts";

/** Where a long-lived session is: its worker starting, a turn running, waiting on a permission, idle, failed, or closed. */
export const SESSION_STATUSES = ["starting", "running", "awaiting_permission", "idle", "failed", "closed"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/**
 * An agent as the orchestrator runs it: what the CLI knows of an agent (its
 * prompt, tools, model, …), in `worker` any further settings its workers
 * start with (environment, MCP servers, an output schema, subagents, …), and
 * whether its processes are reused across its tasks.
 */
export interface AgentSpec extends AgentDefinition {
  /** Worker options for every task of this agent, over the orchestrator's (`worker`) and under the task's. */
  worker?: Partial<WorkerOptions>;
  /** Let this agent's finished tasks hand their process to its next task; over the orchestrator's `reuse`. */
  reuse?: ReuseOption;
  /** All the agent's tasks and sessions together (peers, supervisors, spawned children included) spend at most this; a hard limit. */
  budgetUsd?: number;
}

/** The data of a task, validated when it is submitted. */
export const TaskSpecSchema = z.object({
  /** The task's id in events, results and transcripts; default: a fresh one. Lets a caller follow a task across processes. */
  id: z.string().min(1).optional(),
  /** Shown in events, transcripts and summaries; unique names make transcripts easy to find. */
  name: z.string().min(1).optional(),
  /** The task's first prompt to the worker. */
  prompt: z.string().min(1, "a task needs a non-empty prompt"),
  /**
   * True: the prompt is text only, never an `@path` file read or a slash
   * command; set it for any prompt built from what a model or a program
   * wrote. Default: the worker's `verbatimPrompts`.
   */
  verbatim: z.boolean().optional(),
  /** An agent known to the orchestrator: its prompt, tools and model configure the worker. */
  agent: z.string().min(1).optional(),
  /** Model alias or id for this task, over its agent's and the orchestrator's. */
  model: z.string().min(1).optional(),
  /** The worker's working directory for this task. */
  cwd: z.string().min(1).optional(),
  /** The whole task from its start (not its time in the queue), all attempts included. */
  timeoutMs: z.number().positive().optional(),
  /** No message from the worker for this long stops the attempt. */
  idleTimeoutMs: z.number().positive().optional(),
  /** Further attempts after a transient failure. */
  retries: z.number().int().min(0).optional(),
  /** Higher starts first among waiting tasks; equal priorities start in submission order. Default 0. */
  priority: z.number().int().optional(),
  /** The task's own budget, all its attempts (and, with budgetName, all tasks of that name) together; a hard limit. */
  budgetUsd: z.number().positive().optional(),
  /** The name the task's budget is counted under; default its name. The rounds of a loop share their task's. */
  budgetName: z.string().min(1).optional(),
  /** Its worker may add tasks to the run (post_task, list_tasks, wait_tasks), when the orchestrator has a `taskBoard`. */
  postTasks: z.boolean().optional(),
  /** An agent whose budget the task counts to when its own agent has none (a posted task: its poster's). */
  budgetAgent: z.string().min(1).optional(),
});

export type TaskSpecData = z.infer<typeof TaskSpecSchema>;

export interface TaskSpec extends TaskSpecData {
  /** Any other worker options for this task (merged over the agent's and the defaults). */
  worker?: Partial<WorkerOptions>;
  /**
   * Runs once, in the task's slot, before its first worker starts (so that
   * tasks waiting for a slot cost nothing yet), e.g. to make the directory it
   * works in. What it returns replaces the task's own worker settings of the
   * same names. A failure fails the task.
   */
  prepareWorker?: (signal: AbortSignal) => Promise<Partial<WorkerOptions>>;
  /** Aborting cancels the task: a waiting one leaves the queue, a running one's worker is stopped. */
  signal?: AbortSignal;
}

/** What runs one task to its end: an Orchestrator here, or a distributed run's coordinator. */
export interface TaskRunner {
  /** Resolves with the task's result whatever the outcome; rejects only on invalid input. */
  run(spec: TaskSpec): Promise<TaskResult>;
  /** `count` tasks of these settings will be run soon: their processes may start ahead, where a core is idle (Orchestrator.prepare). */
  prepare?(spec: TaskSpec, count?: number): void;
}

/** How a task ended. */
export const TaskStatusSchema = z.enum(["succeeded", "failed", "cancelled", "skipped"]);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Tokens, as cadre counts them over turns, tasks and runs (the API's own usage is protocol's ApiUsage). */
export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadInputTokens: z.number(),
  cacheCreationInputTokens: z.number(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** Which budget: the run's, an agent's (all its tasks and sessions), or one task's (all its attempts and rounds). */
export const BudgetScopeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("run") }),
  z.object({ kind: z.literal("agent"), name: z.string() }),
  z.object({ kind: z.literal("task"), name: z.string() }),
]);
export type BudgetScope = z.infer<typeof BudgetScopeSchema>;

/** One budget's use so far. */
export const BudgetUseSchema = z.object({ scope: BudgetScopeSchema, limitUsd: z.number(), spentUsd: z.number() });
export type BudgetUse = z.infer<typeof BudgetUseSchema>;

/** Why a task or session did not succeed: a stable code and words a person can act on. */
export const ErrorSummarySchema = z.object({
  code: z.string(),
  message: z.string(),
  /** With BUDGET_EXCEEDED: the budget that stopped it, e.g. "agent reviewer, $2.00". */
  budget: z.string().optional(),
});

/**
 * A task's result: the orchestrator's, a distributed run's (read back from
 * Redis through this schema) and summary.json's (snake_case, through the
 * record's key map) are this one shape.
 */
export const TaskResultSchema = z.object({
  id: z.string(),
  name: z.string(),
  agent: z.string().optional(),
  status: TaskStatusSchema,
  /** The final text of the last turn. */
  text: z.string(),
  structuredOutput: z.unknown().optional(),
  /** This task's own cost; the children it spawned have theirs (Orchestrator.sessionRecords). */
  costUsd: z.number(),
  usage: UsageSchema,
  numTurns: z.number(),
  /** How long it waited for its first slot (until it was dropped, if it never got one). */
  queuedMs: z.number(),
  /** When its first attempt took a slot (epoch ms); undefined if it never started. */
  startedAt: z.number().optional(),
  /** When it settled (epoch ms). */
  finishedAt: z.number(),
  /** Run time: from startedAt to finishedAt, retries and their back-off included; 0 if it never started. */
  durationMs: z.number(),
  attempts: z.number(),
  /** The session of its last attempt, whatever the outcome (to resume or inspect it). */
  sessionId: z.string().optional(),
  error: ErrorSummarySchema.optional(),
  /** What its session ran in the background (workflows, agents, shells), as it ended; absent when nothing. */
  backgroundTasks: z.array(BackgroundTaskSchema).optional(),
});
export type TaskResult = z.infer<typeof TaskResultSchema>;

/**
 * A worker session beside the submitted tasks: a peer that answers ask_peer,
 * a hook supervisor, or a child started with spawn_worker. Each has its own
 * transcript (transcriptPaths, by `id`); the run's cost is the tasks' and these.
 */
export const SessionRecordSchema = z.object({
  id: z.string(),
  role: z.enum(["peer", "supervisor", "child"]),
  /** "peer:<agent>", "supervisor:<agent>", or a child's task name ("<parent>/child"). */
  name: z.string(),
  agent: z.string().optional(),
  /** The task it worked for: a child's parent; for a peer or supervisor, which serve many, the task whose call started it. */
  parent: z.string().optional(),
  sessionId: z.string().optional(),
  costUsd: z.number(),
  usage: UsageSchema,
  numTurns: z.number(),
  /** A child's outcome; undefined for peers and supervisors, which answer turn after turn. */
  status: TaskStatusSchema.optional(),
});
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

export interface TaskInfo {
  id: string;
  name: string;
  agent: string | undefined;
  /** The task that spawned this one, if any. */
  parentId: string | undefined;
}

/** What a user did to a running task: a message into its turn, an interrupt of that turn, a stop of the task. */
export type SteerAction = "send" | "interrupt" | "stop";

export type OrchestratorEvent =
  | { type: "task_queued"; task: TaskInfo }
  /** `startedAt`: when the task's first attempt took its slot (epoch ms), the start its run time counts from. */
  | { type: "task_started"; task: TaskInfo; attempt: number; pid: number | undefined; worker: WorkerOrigin; startedAt: number }
  | { type: "task_message"; task: TaskInfo; message: CliMessage }
  /** A background task of the task's session (a workflow, agent, shell, monitor) started, progressed or ended: its state now. */
  | { type: "background_task"; task: TaskInfo; background: BackgroundTask }
  | { type: "task_retry"; task: TaskInfo; attempt: number; delayMs: number; error: { code: string; message: string } }
  | { type: "task_finished"; task: TaskInfo; result: TaskResult }
  | { type: "worker_state"; task: TaskInfo; state: WorkerState }
  /**
   * A user reached the running task (Orchestrator.sendToTask, interruptTask, stopTask): `from` says from where, `text` is the
   * message sent; `step`, for an interrupt or a stop, the model replies the task's conversation held then.
   */
  | { type: "task_steered"; task: TaskInfo; action: SteerAction; from: string | undefined; text?: string; step?: number; at: number }
  /** The task's agent took in the oldest message sent into its turn that it had not, with `step` model replies in its conversation. */
  | { type: "task_steer_taken"; task: TaskInfo; step: number; at: number }
  /** A result was charged: the task's cost so far, and the run's cost and usage. */
  | {
      type: "cost";
      task: TaskInfo;
      taskUsd: number;
      totalUsd: number;
      totalUsage: Usage;
      /** The agent's and the task's budgets this charge counted against, with their use after it (absent when none has a limit). */
      budgets?: BudgetUse[];
    }
  | { type: "rate_limit"; state: RateLimitState }
  /** A subscription's plan window holds new starts until it resets ("waiting"), or has reset ("resumed"). */
  | ({ type: "plan_window" } & PlanWindowNews)
  /** A budget was reached: what it covers stops and none of it starts; `scope` absent in events of older versions means the run's. */
  | { type: "budget_exceeded"; spentUsd: number; budgetUsd: number; scope?: BudgetScope }
  | { type: "permission_request"; task: TaskInfo; requestId: string; request: Omit<PermissionRequest, "signal"> }
  | { type: "permission_settled"; task: TaskInfo; requestId: string }
  | { type: "hook_failed"; task: TaskInfo; event: string; error: { code: string; message: string } }
  | { type: "session_status"; task: TaskInfo; status: SessionStatus }
  /** The first worker cannot reach the API: the other work waits while its CLI retries (see AccessCheck). */
  | { type: "access_waiting"; message: string }
  /** No work can run (no login, an API that cannot be reached): none more starts. Once per orchestrator. */
  | { type: "access_refused"; error: { code: string; message: string } }
  /** A task's process was closed instead of serving the next task (see OrchestratorOptions.reuse). */
  | { type: "worker_recycled"; task: TaskInfo; pid: number | undefined; reason: string }
  /** A routed hook answered a task's worker (its fallback's answer included). */
  | ({ type: "hook_decided"; task: TaskInfo } & HookDecision)
  /**
   * A peer (ask_peer) or a supervisor (a hook) answered one question: its turn, for
   * the task named `asker` (undefined when no task asked, e.g. a session's worker).
   */
  | { type: "agent_turn"; kind: "peer" | "supervisor"; agent: string; asker: string | undefined; startedAt: number; turn: AgentTurn };

/** What a plan window did: held starts (its use in percent, when told, and its reset) or let them go again. */
export interface PlanWindowNews {
  state: "waiting" | "resumed";
  /** As the CLI names it: "five_hour", "seven_day", … */
  window: string;
  utilization: number | undefined;
  /** Epoch ms. */
  resetsAt: number;
  /** The plan refused a turn (not only past the threshold). */
  rejected: boolean;
}

/** A routed hook's answer: which action gave it, deny, allow or none (no opinion), and when. */
export interface HookDecision {
  event: string;
  action: "callback" | "command" | "policy" | "supervisor";
  decision: "allow" | "deny" | "none";
  toolName: string | undefined;
  startedAt: number;
  finishedAt: number;
}

/** One turn of a peer or supervisor session, as its result message told it. */
export interface AgentTurn {
  sessionId: string;
  isError: boolean;
  costUsd: number;
  usage: Usage;
  numTurns: number;
  finishedAt: number;
}

/** Where a task's process came from: started for it, a spare (prewarm), or reused from an earlier task. */
export type WorkerOrigin = "cold" | "spare" | "reused";

/** Reuse a finished task's process for the next task of the same configuration: true, or at most this many tasks per process. */
export type ReuseOption = boolean | number;

/** What one process brings that is not part of the work it does: see OrchestratorOptions.processOptions. */
export interface ProcessSetup {
  /** Merged last into the options the process starts with. */
  options: Partial<WorkerOptions>;
  /** From now on the process works for `context`: at its start, and whenever a spare or reused process is handed on. */
  bind(context: WorkerContext): void;
  /** The process has ended. */
  release?(): void;
}

/** What a routed hook does: a function, a shell command, a built-in policy, or a supervisor agent. */
export type HookAction = { callback: HookCallback } | { command: string } | { policy: HookPolicy } | { supervisor: string };

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

/**
 * Where a run's spending is counted. The default is in the orchestrator;
 * orchestrators in several processes that share one budget share a ledger
 * kept elsewhere (cadre's distributed runs keep it in Redis). The budget
 * itself (the limit, and what happens when it is reached) stays the
 * orchestrator's.
 */
export interface SpendingLedger {
  /** Spent so far, as far as this process knows. */
  readonly spentUsd: number;
  /** Adds a cost of this process and its token usage. */
  add(usd: number, usage: Usage): void;
  /** A shared ledger calls `listener` when it learns of spending elsewhere. */
  onChange?(listener: () => void): void;
}

export interface OrchestratorOptions {
  /**
   * Live task workers at once. Default 4. "auto": cadre chooses, from the machine's cores and
   * free memory and how much of each turn waits on the model (see AutoConcurrency), and keeps
   * finished workers for the next task of the same settings unless `reuse` says otherwise.
   */
  concurrency?: number | "auto";
  /** What auto sizing reads of the machine (cores, free memory); default: this machine's. */
  machine?: MachineProbe;
  /** Per-agent limits on top of the global one. */
  agentLimits?: Record<string, number>;
  /** Stop starting tasks and interrupt running ones once this much is spent. */
  budgetUsd?: number;
  /** Where spending is counted, when it is shared with orchestrators elsewhere. */
  ledger?: SpendingLedger;
  /** Where an agent's or a task's budget is counted, when shared with orchestrators elsewhere; default: here. */
  scopedLedger?: (scope: BudgetScope) => SpendingLedger;
  /**
   * Before a task starts, compare what is left of its budgets with the median
   * cost of its agent's succeeded tasks, and hold it (skipped, saying so) when
   * it plainly cannot finish. Default true.
   */
  budgetForecast?: boolean;
  /**
   * A subscription's plan windows (rate_limit_event): from `pauseAt` percent of
   * a window's use, no task starts until it resets. A refused turn waits for the
   * reset and runs again whatever this says.
   */
  planUsage?: { pauseAt: number };
  /** Agents by name that tasks and sessions name with `agent`: a subagent definition plus worker options. */
  agents?: Record<string, AgentSpec>;
  /** Worker options for every worker. */
  defaults?: Partial<WorkerOptions>;
  /** Per-worker options computed at start (environment, HOME, …), merged last. */
  workerOptions?: (context: WorkerContext) => Partial<WorkerOptions>;
  /**
   * Settings of one process rather than of its work (e.g. the rehearsal route it
   * talks to), called once per process. Unlike workerOptions, they are not
   * compared when a spare or a reused process is matched to work.
   */
  processOptions?: () => ProcessSetup;
  /**
   * Let a finished task's process serve the next task whose worker settings are
   * identical, after a reset that gives that task a fresh session; `true` means
   * at most 50 tasks per process. An agent's own `reuse` wins. Default false.
   */
  reuse?: ReuseOption;
  /** One registry of hooks for all workers: event name → routed hooks. */
  hooks?: Partial<Record<HookEvent, RoutedHook[]>>;
  /** Permission requests of every worker; without it each worker's policy (deny) applies. */
  canUseTool?: RoutedPermissionHandler;
  /** Agent name → agents it may reach with ask_peer/tell_peer. Absent: every agent may reach every other. */
  connections?: Record<string, string[]>;
  /** Where tell_peer leaves messages and read_inbox takes them; default: in this orchestrator. */
  inbox?: InboxStore;
  /**
   * Give workers the built-in "cadre" MCP server (list_peers, ask_peer, tell_peer, read_inbox,
   * spawn_worker). Default: only a worker whose agent (or task, without one) has another agent
   * it may reach under `connections`; true: every worker; false: none.
   */
  peerTools?: boolean;
  /** The run's tasks, for the workers of tasks with `postTasks`: what their post_task, list_tasks and wait_tasks reach. */
  taskBoard?: TaskBoard;
  /**
   * Cache-aware fan-out, on by default: of tasks whose workers send the same
   * prompt prefix (same model, agent, tools, MCP servers, working directory),
   * one sends its first prompt at once and the others, started meanwhile,
   * send theirs when its response begins (or `maxWaitMs`, default 5 s, after
   * its request went out), so they read the prefix from the API's cache
   * instead of each writing it. False sends every first prompt at once.
   */
  cacheStagger?: boolean | { maxWaitMs?: number };
  /**
   * Check once, before fanning out, that workers can reach the model (on by
   * default): the first task starts alone until its request has gone out for
   * a second with no sign of failure; no login, or an API that cannot be
   * reached, stops the rest from starting (see AccessCheck). False starts
   * every task at once.
   */
  accessCheck?: boolean;
  /** Write one JSONL transcript per task here. */
  outDir?: string;
  /** Append every worker's model replies here (replies.jsonl, what a replay serves again; see ReplyLog). */
  repliesPath?: string;
  /** The run this orchestrator works for: named in the workers' own telemetry when the user turned it on (CLAUDE_CODE_ENABLE_TELEMETRY). */
  runId?: string;
  /** Defaults for tasks that do not set them. */
  retries?: number;
  /** The whole task from its start, all attempts included. */
  timeoutMs?: number;
  /** No message from the worker for this long stops the attempt. */
  idleTimeoutMs?: number;
}

/**
 * Longest prompt a post may carry, in bytes as UTF-8: as long as a steering message may be. Each post is journalled and
 * kept in the record, so a model that posts megabytes would fill both. post_task tells the model; the board refuses past it.
 */
export const MAX_POSTED_PROMPT_BYTES = 256 * 1024;

/** What a worker asks the run to do as a task of the run: text from a model, data only. */
export interface TaskPost {
  prompt: string;
  /** The task's name; default: one the board makes. The same name posted again is the same task. */
  name?: string;
  /** An agent the run knows; default: a plain worker with the run's defaults. */
  agent?: string;
  /** Other posted tasks that must end first. */
  dependsOn?: string[];
}

/** A task of the run as list_tasks shows it. */
export interface BoardTask {
  name: string;
  status: "pending" | "running" | TaskStatus;
  agent?: string;
  /** The task whose worker posted it; absent for the plan's own tasks. */
  postedBy?: string;
  /** The start of its result's text (or its error), once it has ended. */
  result?: string;
}

/** A task's end as wait_tasks returns it. */
export interface BoardResult {
  name: string;
  status: TaskStatus;
  text: string;
  error?: string;
}

/**
 * The run's tasks as the workers that may post see them. Implemented by the
 * layer that runs the plan (a swarm file's graph), handed to the Orchestrator
 * as `taskBoard`; the orchestrator only gives its tools to workers.
 */
export interface TaskBoard {
  /**
   * Adds a task to the run for `poster` (the task whose worker posts);
   * resolves with its name once the post is kept in the run's record. A post
   * the run refuses rejects with a TaskPostRefusedError saying why.
   */
  post(poster: string, post: TaskPost): Promise<{ name: string; existed: boolean }>;
  list(): BoardTask[] | Promise<BoardTask[]>;
  /** Resolves once each named task has ended; rejects with a TaskPostRefusedError for a name it cannot wait on. */
  wait(waiter: string, names: readonly string[], signal: AbortSignal): Promise<BoardResult[]>;
}
