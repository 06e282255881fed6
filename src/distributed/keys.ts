/**
 * Every name cadre uses in Redis. One BullMQ queue per run (its limits are the
 * run's), plus the run's record, event stream, ledger, inboxes, cancel
 * marks and steering requests, all under `cadre:run:<id>:`.
 */

/** The prefix of every key, BullMQ's queues included. */
export const PREFIX = "cadre";
/** Ids of the runs hosts should serve. */
export const RUNS_KEY = `${PREFIX}:runs`;
/** Pub/sub: a poke for the hosts (runs changed, a job cancelled, the budget reached). */
export const CONTROL_CHANNEL = `${PREFIX}:control`;

/** Letters, digits, `.`, `_` and `-`: safe in key and queue names. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9._-]{1,80}$/;

export interface RunKeys {
  /** The BullMQ queue's name (BullMQ puts it under PREFIX). */
  queue: string;
  /** Every key of the run that is not BullMQ's starts with this. */
  base: string;
  /** JSON: what hosts need to serve the run (see DistributedRunSchema). */
  record: string;
  /** Stream: every orchestrator event of the run's tasks, from every host. */
  events: string;
  /** Float: dollars spent by the run on all hosts. */
  spent: string;
  /** Hash: token usage of the run on all hosts. */
  usage: string;
  /** Float: dollars spent under an agent's or a task's budget ("agent reviewer") on all hosts. */
  budgetSpent(budget: string): string;
  /** Set: job ids the coordinator cancelled. */
  cancelled: string;
  /** Hash: job id → its JobResult, written once by the host that held the job (see run-host.ts). */
  results: string;
  /** Set: job ids the coordinator made again after Redis lost them. */
  recreated: string;
  /** Set when the coordinator ended the run (outlives the run's other keys for a while): hosts then stop serving it. */
  ended: string;
  /** A SCAN pattern for every key of the run's BullMQ queue. */
  queueKeys: string;
  /** BullMQ's hash of a job, and its lock (the token of the host that runs it). */
  job(jobId: string): string;
  lock(jobId: string): string;
  inbox(peer: string): string;
  /** List: what the run's workers ask of its task board (post_task, list_tasks, wait_tasks), for the coordinator to answer. */
  boardRequests: string;
  /** List: the coordinator's answer to one such request. */
  boardReply(requestId: string): string;
  /** Hash: steering requests (request id → request) for the host of this name, which takes each one once (see steering.ts). */
  steerRequests(host: string): string;
  /** List: a host's answer to one steering request. */
  steerReply(requestId: string): string;
  /** Set: the names of the hosts that took a job of the run and answer steering requests (a host of an older cadre never joins it). */
  steerHosts: string;
}

export function runKeys(runId: string): RunKeys {
  const base = `${PREFIX}:run:${runId}`;
  return {
    queue: `run-${runId}`,
    base,
    record: `${base}:record`,
    events: `${base}:events`,
    spent: `${base}:spent`,
    usage: `${base}:usage`,
    budgetSpent: (budget) => `${base}:budget:${budget}`,
    cancelled: `${base}:cancelled`,
    results: `${base}:results`,
    recreated: `${base}:recreated`,
    ended: `${PREFIX}:ended:${runId}`,
    queueKeys: `${PREFIX}:run-${runId}:*`,
    job: (jobId) => `${PREFIX}:run-${runId}:${jobId}`,
    lock: (jobId) => `${PREFIX}:run-${runId}:${jobId}:lock`,
    inbox: (peer) => `${base}:inbox:${peer}`,
    boardRequests: `${base}:board`,
    boardReply: (requestId) => `${base}:board:${requestId}`,
    steerRequests: (host) => `${base}:steer:${host}`,
    steerReply: (requestId) => `${base}:steered:${requestId}`,
    steerHosts: `${base}:steer-hosts`,
  };
}

/**
 * A config task's job id, and so its task id everywhere (events, results,
 * transcripts): stable, so a restarted coordinator finds its jobs. `attempt`
 * marks a job of a resumed run's attempt, for a task whose earlier job is
 * stale. BullMQ refuses ids that contain ":" or are integers.
 */
export function jobIdFor(taskName: string, run = 1, attempt?: number): string {
  // "#" never occurs in an encoded name: a later run of a task cannot take another task's id.
  return `t-${encodeURIComponent(taskName)}${attempt === undefined ? "" : `#a${attempt}`}${run > 1 ? `#${run}` : ""}`;
}
