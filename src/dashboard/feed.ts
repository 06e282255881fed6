// What the dashboard page is sent (a run's state, the list of runs) and what it may send back.
import { z } from "zod";
import type { BackgroundTask, RateLimitState } from "../orchestrator/index.ts";
import { type RowKind, type RunRow, SteerTextSchema } from "../run/index.ts";
import type { Conversation } from "./conversation.ts";

/**
 * What the page is sent: the state of one run (a live `cadre run`, the child
 * sessions of `cadre mcp`, or a finished run read back from its summary.json),
 * the list of runs to choose from, and what the page may send back.
 */

/** A status and since when it holds: the row's history, drawn as the timeline. */
export interface PhaseView {
  status: string;
  at: number;
}

export interface PendingView {
  requestId: string;
  toolName: string;
  /** "tool", "question" or "plan". */
  kind: string;
  ask: string;
  /** The tool's input as indented JSON, cut when long. */
  input: string;
  /** For a question: each question's text and option labels. */
  questions?: { question: string; options: string[]; multiSelect: boolean }[];
  since: number;
}

/** A background task of a row's session, and a workflow's agents: drawn as the row's children. */
export interface BackgroundView {
  id: string;
  kind: string;
  description: string;
  status: string;
  tokens: number | null;
  toolUses: number | null;
  agents: { label: string; phase: string | null; state: string; tokens: number | null }[];
}

export function backgroundView(task: BackgroundTask): BackgroundView {
  return {
    id: task.id,
    kind: task.kind,
    description: task.description,
    status: task.status,
    tokens: task.usage?.totalTokens ?? null,
    toolUses: task.usage?.toolUses ?? null,
    agents: (task.agents ?? []).map((agent) => ({
      label: agent.label ?? `agent ${agent.index}`,
      phase: agent.phase ?? null,
      state: agent.state,
      tokens: agent.tokens ?? null,
    })),
  };
}

/** A row as the page gets it: the model's fields (see RunRow), a status a record may name freely, and what only the page needs. */
export interface RowView
  extends Pick<
    RunRow,
    "key" | "name" | "agent" | "kind" | "parent" | "group" | "postedBy" | "attempts" | "turns" | "costUsd" | "queuedAt" | "startedAt" | "finishedAt"
  > {
  status: string;
  /** From queued to the first start. */
  queuedMs: number | null;
  /** From the first start to the end (to now while it runs). */
  runMs: number | null;
  phases: PhaseView[];
  branch: string | null;
  activity: string;
  error: string | null;
  waitsFor: string[];
  /** Whether a conversation can be shown (a transcript exists, or the task has spoken). */
  hasConversation: boolean;
  pending: PendingView[];
  background: BackgroundView[];
  /** A workflow script's agent() call: its phase (opts.phase, or the phase the script last started); null for other rows. */
  phase: string | null;
}

/** A row with nothing known yet but who it is. */
export function blankRowView(key: string, name: string, agent: string | null | undefined, kind: RowKind): RowView {
  return {
    key,
    name,
    agent: agent ?? null,
    kind,
    parent: null,
    group: null,
    postedBy: null,
    status: "waiting",
    attempts: 0,
    turns: 0,
    costUsd: 0,
    queuedAt: null,
    startedAt: null,
    finishedAt: null,
    queuedMs: null,
    runMs: null,
    phases: [],
    branch: null,
    activity: "",
    error: null,
    waitsFor: [],
    hasConversation: false,
    pending: [],
    background: [],
    phase: null,
  };
}

/** A workflow script's run (`cadre run script.js`): what the page shows beside its rows. */
export interface WorkflowView {
  /** meta.name and meta.description. */
  name: string;
  description: string;
  /** The script's return value as indented JSON (clipped), once it returned; null before, or when it did not. */
  result: string | null;
  /** Why the script did not return: its error's code and message; null while it runs and when it returned. */
  error: string | null;
  /** Its log() lines, in order. */
  logs: string[];
}

export interface TotalsView {
  tasks: number;
  byStatus: Record<string, number>;
  turns: number;
  costUsd: number;
  /** The share of input tokens read from the prompt cache; null before any usage is known. */
  cacheReadShare: number | null;
  budgetUsd: number | null;
  budgetExceeded: boolean;
  /** Spend by agent, most first ("" for work without an agent), with the agent's budget (null: none). */
  byAgent: { agent: string; costUsd: number; budgetUsd: number | null }[];
  /** Each agent's and task's budget: its use so far, and whether it was reached. */
  budgets: { budget: string; limitUsd: number; spentUsd: number; reached: boolean }[];
}

export interface RunSnapshot {
  id: string;
  title: string;
  /** "swarm" (cadre run), "sessions" (cadre mcp), "record" (a past run). */
  mode: "swarm" | "sessions" | "record";
  live: boolean;
  finished: boolean;
  startedAt: number | null;
  finishedAt: number | null;
  now: number;
  /** The change of the run it is as of (see RunModel.seq); 0 for a record. */
  seq: number;
  rows: RowView[];
  totals: TotalsView;
  rateLimit: RateLimitState | null;
  running: number;
  /** Whether the page may answer permission requests. */
  answerable: boolean;
  /** Whether the page may message, interrupt or stop a running task (a live `cadre run --ui`). */
  steerable: boolean;
  /** Costs made up by a rehearsal's scripted model (shown as ~$). */
  costSimulated: boolean;
  /** Set when the record could not be read in full (a summary.json of an older or newer cadre). */
  notice: string | null;
  /** A workflow script's run: its result and logs; null for a swarm or sessions. */
  workflow: WorkflowView | null;
}

/**
 * A snapshot as the stream sends it: each row as the list of its values in
 * the order `columns` names the fields (the names once, not once per row: a
 * run of 10,000 rows goes in about half the bytes). The page turns them back
 * into rows.
 */
export type WireSnapshot = Omit<RunSnapshot, "rows"> & { columns: string[]; rows: unknown[][] };

export function toWire(snapshot: RunSnapshot): WireSnapshot {
  const columns = Object.keys(snapshot.rows[0] ?? {});
  const rows = snapshot.rows.map((row) => columns.map((column) => row[column as keyof RowView]));
  return { ...snapshot, columns, rows };
}

export interface RunListing {
  id: string;
  title: string;
  startedAt: string | null;
  live: boolean;
  /** "3/4 succeeded", "running", or why it cannot be read. */
  outcome: string;
}

/** The page's answer to a permission request (as answer_permission takes it). */
export const PermissionAnswerSchema = z.object({
  decision: z.enum(["allow", "deny"]),
  message: z.string().max(10_000).optional(),
  interrupt: z.boolean().optional(),
  answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
});
export type PermissionAnswer = z.infer<typeof PermissionAnswerSchema>;

export const AnswerRequestSchema = z.object({ row: z.string().min(1), requestId: z.string().min(1), answer: PermissionAnswerSchema });

/** The page's message, interrupt or stop for a running task's row: the text is data, sent to the agent verbatim. */
export const SteerRequestSchema = z.discriminatedUnion("action", [
  z.strictObject({ row: z.string().min(1), action: z.literal("send"), text: SteerTextSchema.max(50_000) }),
  z.strictObject({ row: z.string().min(1), action: z.literal("interrupt") }),
  z.strictObject({ row: z.string().min(1), action: z.literal("stop") }),
]);
export type SteerRequest = z.infer<typeof SteerRequestSchema>;

/** One run the page can show. */
export interface RunFeed {
  readonly id: string;
  snapshot(now: number): RunSnapshot;
  /**
   * The run as of now with only the rows changed after change `since` (a
   * patch of a snapshot of `rowCount` rows); undefined when rows came or went
   * since, or the feed cannot tell: then a whole snapshot is sent.
   */
  changedSince?(now: number, since: number, rowCount: number): RunSnapshot | undefined;
  /** Called after each change of a live run; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** The conversation of a row, or undefined when it has none. */
  conversation(key: string): Promise<Conversation | undefined>;
  /** Answers a waiting permission request; throws a CadreError the page shows. Absent: nothing is answerable. */
  answer?(key: string, requestId: string, answer: PermissionAnswer): void;
  /** Messages, interrupts or stops the running task of a row; rejects with a CadreError the page shows. Absent: the page cannot. */
  steer?(request: SteerRequest): Promise<void>;
}

/** Where the dashboard's runs come from. */
export interface DashboardSource {
  runs(): Promise<RunListing[]>;
  run(id: string): Promise<RunFeed | undefined>;
}

/** A source of one run: the live run of `cadre run --ui` or the sessions of `cadre mcp`. */
export function singleRun(feed: RunFeed): DashboardSource {
  return {
    runs: async () => {
      const snapshot = feed.snapshot(Date.now());
      const startedAt = snapshot.startedAt === null ? null : new Date(snapshot.startedAt).toISOString();
      return [{ id: feed.id, title: snapshot.title, startedAt, live: snapshot.live, outcome: snapshot.live ? "running" : "finished" }];
    },
    run: async (id) => (id === feed.id ? feed : undefined),
  };
}
