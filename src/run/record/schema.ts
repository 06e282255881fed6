/**
 * The record of a swarm run, `summary.json`: what the run did, per task and
 * per other session, and in total. `cadre run` writes it (and `--resume`
 * reads it back); the dashboard reads it leniently, from these schemas.
 */
import { z } from "zod";
import { type TaskResult, TaskStatusSchema, type Usage } from "../../orchestrator/index.ts";
import { own } from "../../util/own.ts";
import { backgroundTaskFromRecord, recordBackgroundTask, SummaryBackgroundTaskSchema } from "./background-record.ts";

export const SUMMARY_FILE = "summary.json";
/** A workflow script's run keeps a copy of the script beside its record: what `cadre replay` runs again. */
export const WORKFLOW_SCRIPT_FILE = "workflow.js";

/** summary.json's name for each of the orchestrator's token counts; the compiler checks that none is left out. */
const USAGE_KEYS = {
  inputTokens: "input_tokens",
  outputTokens: "output_tokens",
  cacheReadInputTokens: "cache_read_input_tokens",
  cacheCreationInputTokens: "cache_creation_input_tokens",
} as const satisfies Record<keyof Usage, string>;
type RecordUsageKey = (typeof USAGE_KEYS)[keyof Usage];

const UsageSchema = z.looseObject(
  Object.fromEntries(Object.values(USAGE_KEYS).map((key) => [key, z.number()])) as Record<RecordUsageKey, z.ZodNumber>,
);
type RecordUsage = z.infer<typeof UsageSchema>;

const usageEntries = Object.entries(USAGE_KEYS) as [keyof Usage, RecordUsageKey][];

/** The orchestrator's usage as summary.json writes it. */
export function recordUsage(usage: Usage): RecordUsage {
  // A loop, not Object.fromEntries: a run makes a row of every task at each write of its record.
  const record = {} as RecordUsage;
  for (const [from, to] of usageEntries) record[to] = usage[from];
  return record;
}

/** summary.json's usage as the orchestrator counts it. */
export function usageFromRecord(usage: RecordUsage): Usage {
  return Object.fromEntries(usageEntries.map(([to, from]) => [to, usage[from]])) as Usage;
}

export const SummaryTaskSchema = z.looseObject({
  name: z.string(),
  /** A for_each copy's name as written ("review-{{item}}"), which its copies share; absent for other tasks and from older records. */
  template: z.string().optional(),
  agent: z.string().nullable(),
  /**
   * How it ended; while the run goes on (complete: false), "running" for a task
   * that has started and "pending" for one that has not (absent from older records).
   */
  status: z.enum([...TaskStatusSchema.options, "running", "pending"]),
  /** The final text of the task's last turn. */
  text: z.string(),
  /** With an output_schema: the answer, as the CLI validated it against the schema; else null. */
  structured_output: z.unknown(),
  cost_usd: z.number(),
  usage: UsageSchema,
  num_turns: z.number(),
  /** How long it waited for a slot once its dependencies were done. */
  queued_ms: z.number(),
  /** When it first took a slot; null if it never ran. */
  started_at: z.string().nullable(),
  /** Null while it is pending or running. */
  finished_at: z.string().nullable(),
  /** Run time, from started_at to finished_at: its time limit counts the same way. */
  duration_ms: z.number(),
  attempts: z.number(),
  session_id: z.string().nullable(),
  depends_on: z.array(z.string()),
  /** Its `when:` condition as written; a task it skipped has status "skipped" and the reason in `error` (code CONDITION_FALSE). */
  when: z.string().optional(),
  /** The task's JSONL transcript, relative to the summary; null when the worker never said anything. */
  transcript: z.string().nullable(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  /** Distributed runs: the host (`cadre worker --name`) that ran the task; null when none did. */
  host: z.string().nullable().optional(),
  /** With a worktree: the branch holding what the task changed, and its commit (null when it changed nothing: no branch is left). */
  branch: z.string().nullable().optional(),
  commit: z.string().nullable().optional(),
  /** With a worktree: the commit it started from. */
  base: z.string().optional(),
  /** With a worktree: `git diff --shortstat` from base to commit. */
  diff_stat: z.string().optional(),
  /** With keep_worktrees: where the task's worktree still is. */
  worktree: z.string().nullable().optional(),
  /** What the result depends on; `cadre run --resume` keeps a result while both still match. Null for a task that never started. */
  fingerprint: z
    .object({ prompt: z.string(), settings: z.string(), template: z.string().optional(), inputs: z.record(z.string(), z.string()).optional() })
    .nullable()
    .optional(),
  /** True when this result was kept from an earlier attempt of the run (`--resume`) rather than run in this one. */
  carried_over: z.boolean().optional(),
  /** With carried_over: the run (its run_id, or a Claude Code run's `wf_…` id) and the attempt that ran it (absent: not known, or a Claude Code run). */
  carried_from: z.looseObject({ run_id: z.string(), attempt: z.number().optional() }).optional(),
  /** A copy made by a for_each: its item, and (for a for_each over a result) the task it is a copy of and its place in the list. */
  item: z.unknown().optional(),
  copy_of: z.string().optional(),
  index: z.number().optional(),
  /** A for_each over a result: the copies it made (its row's status, text and structured output are theirs, as lists). */
  copies: z.array(z.string()).optional(),
  /** One round of a loop task: the task, the round (from 1) and the loop. */
  round_of: z.string().optional(),
  round: z.number().optional(),
  loop: z.string().optional(),
  /** A loop task: the rounds it ran (its row's result is the last round's; each round has its own row). */
  rounds: z.number().optional(),
  /** A task an agent posted (post_task): the task that posted it, how deep (1 for a post by a file's task), and its prompt as posted. */
  posted_by: z.string().optional(),
  post_depth: z.number().optional(),
  prompt: z.string().optional(),
  /** What its session ran in the background (workflows, agents, shells); absent when nothing, and from older records. */
  background_tasks: z.array(SummaryBackgroundTaskSchema).optional(),
});

/** What one agent spent over the run: its tasks and sessions (peers, supervisors, children), and the budget it had (null: none). */
export const AgentSpendSchema = z.looseObject({ cost_usd: z.number(), tasks: z.number(), budget_usd: z.number().nullable() });
export type AgentSpend = z.infer<typeof AgentSpendSchema>;

/** The key of work that names no agent in `by_agent`. */
export const NO_AGENT = "(no agent)";

/**
 * Spend by agent, added up row by row (a for_each's or a loop's own row, which
 * stands for its copies or rounds, left out) and session by session; what
 * older records, without `totals.by_agent`, are read with too.
 */
export class AgentSpending {
  readonly #spend: Record<string, AgentSpend> = {};
  readonly #budgets: Readonly<Record<string, number | undefined>>;

  constructor(budgets: Readonly<Record<string, number | undefined>> = {}) {
    this.#budgets = budgets;
  }

  task(task: SpendRow & { copies?: unknown; rounds?: unknown }): void {
    if (task.copies !== undefined || task.rounds !== undefined) return;
    const entry = this.#entry(task.agent);
    entry.cost_usd += task.cost_usd ?? 0;
    entry.tasks++;
  }

  session(session: SpendRow): void {
    this.#entry(session.agent).cost_usd += session.cost_usd ?? 0;
  }

  get byAgent(): Record<string, AgentSpend> {
    return this.#spend;
  }

  #entry(agent: string | null | undefined): AgentSpend {
    const key = agent ?? NO_AGENT;
    const entry = own(this.#spend, key) ?? { cost_usd: 0, tasks: 0, budget_usd: own(this.#budgets, key) ?? null };
    Object.defineProperty(this.#spend, key, { value: entry, enumerable: true, writable: true, configurable: true });
    return entry;
  }
}

/** A task's or session's entry as far as its spend goes (records of other versions may lack fields). */
type SpendRow = { agent?: string | null; cost_usd?: number };

/** Spend by agent of a record: its own, or, for an older record, added up from its tasks and sessions. */
export function recordSpendByAgent(record: {
  tasks: readonly (SpendRow & { copies?: unknown; rounds?: unknown })[];
  sessions?: readonly SpendRow[];
  totals?: { by_agent?: Record<string, AgentSpend> };
}): Record<string, AgentSpend> {
  if (record.totals?.by_agent) return record.totals.by_agent;
  const spending = new AgentSpending();
  for (const task of record.tasks) spending.task(task);
  for (const session of record.sessions ?? []) spending.session(session);
  return spending.byAgent;
}

/** A loop of the run: how it ended ("running" while it goes on) and after how many rounds. */
export const SummaryLoopSchema = z.looseObject({
  name: z.string(),
  tasks: z.array(z.string()),
  until: z.string(),
  max_rounds: z.number(),
  status: z.enum(["succeeded", "max_rounds", "failed", "skipped", "cancelled", "running", "pending"]),
  rounds: z.number(),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
});

/** A worker session beside the tasks: a peer (ask_peer), a hook supervisor, or a child (spawn_worker). */
export const SummarySessionSchema = z.looseObject({
  role: z.enum(["peer", "supervisor", "child"]),
  /** "peer:<agent>", "supervisor:<agent>", or a child's task name ("<parent>/child"). */
  name: z.string(),
  agent: z.string().nullable(),
  /** The task it worked for: a child's parent; for a peer or supervisor (which serve many), the task that started it. */
  parent: z.string().nullable(),
  session_id: z.string().nullable(),
  cost_usd: z.number(),
  usage: UsageSchema,
  num_turns: z.number(),
  /** A child's outcome; null for peers and supervisors. */
  status: TaskStatusSchema.nullable(),
  transcript: z.string().nullable(),
  /** Distributed runs: the host (`cadre worker --name`) the session worked on. */
  host: z.string().nullable().optional(),
  /** True when the session worked in an earlier attempt of the run (`--resume`). */
  carried_over: z.boolean().optional(),
});

/** summary.json: what a run did, per task and per other session, and in total. */
/** A message, interrupt or stop a user sent a running task (docs/steering.md): who, when, to which task, and the message. */
export const SummarySteeringSchema = z.looseObject({
  task: z.string(),
  action: z.enum(["send", "interrupt", "stop"]),
  /** Where it came from: "cadre send", "the dashboard", the library's own name; null when not said. */
  from: z.string().nullable(),
  at: z.string(),
  text: z.string().optional(),
  /**
   * Where in the task's conversation it took effect, as the model replies the conversation held: for a send, when the
   * agent took the message in (absent while it had not); for an interrupt or a stop, when it was applied. A replay
   * does it again at the same step (docs/replay.md); a record without it (an older cadre's) cannot be placed.
   */
  step: z.number().int().nonnegative().optional(),
});

export const SummarySchema = z.looseObject({
  swarm: z.string(),
  /** Names the run's branches: cadre/<run_id>/<task>. */
  run_id: z.string(),
  config: z.string(),
  rehearsal: z.boolean(),
  /** True for a rehearsal: its costs are what the scripted model's tokens would cost, not money spent. */
  cost_simulated: z.boolean(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number(),
  /** True when a signal (Ctrl-C, SIGTERM, a hang-up) stopped the run; the tasks it stopped are then "cancelled". */
  interrupted: z.boolean(),
  /**
   * False while the run is still going: the record is written when the run
   * starts and compacted from the run's journal (journal.ts: a line when a
   * task's session starts and when a task ends) every few seconds, with the
   * tasks not yet ended "pending" or "running" (their session id known), so a
   * run killed at any point can be resumed from both. (Older records show such
   * tasks as "cancelled" with the code UNFINISHED.)
   */
  complete: z.boolean().optional(),
  /** 1 for the first run; each `--resume` adds one. */
  attempt: z.number().optional(),
  /** The W3C traceparent of each traced attempt's run span (OpenTelemetry): a resumed run's span links to them. */
  traces: z.array(z.string()).optional(),
  /** What this attempt alone spent and ran; `totals` are for the whole run, earlier attempts included. */
  attempt_totals: z.looseObject({ tasks_run: z.number(), cost_usd: z.number() }).optional(),
  exit_code: z.number(),
  /** The budget the run applied (a rehearsal applies none unless asked); null for none. Absent from older records. */
  budget_usd: z.number().nullable().optional(),
  totals: z.looseObject({
    tasks: z.number(),
    succeeded: z.number(),
    failed: z.number(),
    cancelled: z.number(),
    skipped: z.number(),
    /** Everything the run spent: in a local run, the sum of its tasks' and sessions' (each is listed). */
    cost_usd: z.number(),
    usage: UsageSchema,
    /**
     * What the cache reads saved: their tokens priced as cache writes, less
     * their price as reads; the sum over tasks and sessions, each estimated
     * at the API's price ratios from the cost the CLI reported for it.
     */
    cache_saved_usd: z.number(),
    num_turns: z.number(),
    /** Spend by agent (NO_AGENT for work without one): its tasks' and its sessions' cost, and its budget; absent from older records (see spendByAgent). */
    by_agent: z.record(z.string(), AgentSpendSchema).optional(),
  }),
  tasks: z.array(SummaryTaskSchema),
  sessions: z.array(SummarySessionSchema),
  /** What users sent the running tasks, in order, over every attempt (absent when nothing was). */
  steering: z.array(SummarySteeringSchema).optional(),
  /** The config's loops (absent from older records and from runs without loops). */
  loops: z.array(SummaryLoopSchema).optional(),
  /** A replay (`cadre replay`): the run it replays, and where it left that run's record (docs/replay.md). */
  replay: z
    .looseObject({
      of: z.looseObject({ run_id: z.string(), dir: z.string() }),
      divergences: z.array(
        z.looseObject({ script: z.string(), step: z.number(), kind: z.string(), expected: z.string(), got: z.string(), message: z.string() }),
      ),
    })
    .optional(),
});
export type Summary = z.infer<typeof SummarySchema>;
export type SummaryTask = z.infer<typeof SummaryTaskSchema>;
export type SummarySession = z.infer<typeof SummarySessionSchema>;
export type SummaryLoop = z.infer<typeof SummaryLoopSchema>;
export type SummarySteering = z.infer<typeof SummarySteeringSchema>;

/**
 * Where each field of a task's result goes in its summary.json entry: the
 * same value under its snake_case name, with times as ISO strings, usage by
 * USAGE_KEYS and an absent value as null. `id` is the orchestrator's (the
 * record names the transcript instead) and `agent` the config's. The
 * compiler checks that every field of TaskResult is placed.
 */
const RESULT_KEYS = {
  id: null,
  name: null,
  agent: null,
  status: "status",
  text: "text",
  structuredOutput: "structured_output",
  costUsd: "cost_usd",
  usage: "usage",
  numTurns: "num_turns",
  queuedMs: "queued_ms",
  startedAt: "started_at",
  finishedAt: "finished_at",
  durationMs: "duration_ms",
  attempts: "attempts",
  sessionId: "session_id",
  error: "error",
  backgroundTasks: "background_tasks",
} as const satisfies Record<keyof TaskResult, keyof SummaryTask | null>;

const TIMES = new Set<keyof TaskResult>(["startedAt", "finishedAt"]);
const resultEntries = (Object.entries(RESULT_KEYS) as [keyof TaskResult, keyof SummaryTask | null][]).filter(
  (entry): entry is [keyof TaskResult, keyof SummaryTask] => entry[1] !== null,
);

/** The keys of a summary.json task entry that its result gives. */
type ResultFieldKey = Exclude<(typeof RESULT_KEYS)[keyof TaskResult], null>;

/** The fields of a summary.json task entry that come from its result. */
export function recordResultFields(result: TaskResult): Pick<SummaryTask, ResultFieldKey> {
  const fields: Record<string, unknown> = {};
  for (const [from, to] of resultEntries) {
    const value = result[from];
    if (from === "usage") fields[to] = recordUsage(result.usage);
    else if (from === "backgroundTasks") {
      if (result.backgroundTasks) fields[to] = result.backgroundTasks.map(recordBackgroundTask);
    } else if (TIMES.has(from)) fields[to] = value === undefined ? null : new Date(value as number).toISOString();
    else fields[to] = value ?? null;
  }
  return fields as Pick<SummaryTask, ResultFieldKey>;
}

/** A task's result as an earlier attempt recorded it (`id` is new: ids name one attempt's transcripts). */
export function resultFromRecord(task: SummaryTask & { status: TaskResult["status"] }, id: string): TaskResult {
  const fields = Object.fromEntries(
    resultEntries.map(([to, from]) => {
      const value = task[from];
      if (to === "usage") return [to, usageFromRecord(task.usage)];
      if (to === "backgroundTasks") return [to, task.background_tasks?.map(backgroundTaskFromRecord)];
      if (TIMES.has(to)) return [to, typeof value === "string" ? Date.parse(value) : undefined];
      return [to, value ?? undefined];
    }),
  );
  return { ...fields, id, name: task.name, agent: task.agent ?? undefined } as TaskResult;
}
