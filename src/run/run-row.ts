// A row of the run's read-model: one task or session, its status history, and what it came to.
import type { BackgroundTask, OrchestratorEvent, SessionStatus, TaskStatus, Usage } from "../orchestrator/index.ts";

/** A row of the run's read-model (see RunModel): one task or session, what it does and what it came to. */

/** Where a row is: before the orchestrator has it (waiting), queued, its worker starting, running, retrying, done; or a session's state. */
export type RowStatus = "waiting" | "queued" | "starting" | "running" | "retrying" | TaskStatus | SessionStatus;

/** A config task, a spawned child, a `cadre mcp` child session, or (from the record) a peer or supervisor. */
export type RowKind = "task" | "child" | "session" | "peer" | "supervisor";

/** A status and since when it holds: the row's history. */
export interface Phase {
  status: RowStatus;
  at: number;
}

type AskedPermission = Extract<OrchestratorEvent, { type: "permission_request" }>["request"];

export interface PendingRequest {
  requestId: string;
  request: AskedPermission;
  since: number;
}

export interface Row {
  /** Stable for the row's life: "t:<config task name>", or "id:<orchestrator task id>". */
  key: string;
  name: string;
  agent: string | null;
  kind: RowKind;
  /** The key of the row that spawned this one. */
  parent: string | null;
  /** For a for_each copy: the task's name as written, which its copies share. */
  group: string | null;
  /** For a task an agent posted (post_task): the task that posted it. */
  postedBy: string | null;
  /** A workflow script's agent() call: its phase (opts.phase, or the phase the script last started). */
  callPhase: string | null;
  /** The orchestrator's id, once it has the task. */
  taskId: string | undefined;
  status: RowStatus;
  waitsFor: readonly string[];
  attempts: number;
  turns: number;
  costUsd: number;
  /** Tokens (and cache reads) of its result. */
  usage: Usage | undefined;
  sessionId: string | undefined;
  queuedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  /** The orchestrator's measures: the wait for a slot, and the run time from the first start (retries included). */
  queuedMs: number | null;
  durationMs: number | null;
  phases: Phase[];
  branch: string | null;
  /** What it does now, or what it came to, in one line. */
  activity: string;
  error: string | null;
  pending: PendingRequest[];
  /** Its session's background tasks (workflows with their agents, background agents, shells): shown as its children. */
  background: BackgroundTask[];
  /** The model's change number at the row's latest change: a reader that sent the rows up to one sends on only those above it. */
  version: number;
}

export type RunRow = Readonly<Row>;

export function taskKey(name: string): string {
  return `t:${name}`;
}

export function blankRow(key: string, name: string, agent: string | null | undefined, kind: RowKind, parent: string | null = null): Row {
  return {
    key,
    name,
    agent: agent ?? null,
    kind,
    parent,
    group: null,
    postedBy: null,
    callPhase: null,
    taskId: undefined,
    status: "waiting",
    waitsFor: [],
    attempts: 0,
    turns: 0,
    costUsd: 0,
    usage: undefined,
    sessionId: undefined,
    queuedAt: null,
    startedAt: null,
    finishedAt: null,
    queuedMs: null,
    durationMs: null,
    phases: [],
    branch: null,
    activity: "",
    error: null,
    pending: [],
    background: [],
    version: 0,
  };
}
