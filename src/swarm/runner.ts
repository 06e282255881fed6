import { randomUUID } from "node:crypto";
import { resultWithoutTurn, type TaskResult, type TaskRunner, type TaskStatus } from "../orchestrator/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { SESSION_NOT_FOUND } from "../worker/index.ts";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask, type ResultFields, taskSpecFor } from "./config/index.ts";
import { type TaskFingerprint, taskFingerprint } from "./fingerprint.ts";
import { type OpenWorktree, RunWorktrees, type WorktreeOutcome } from "./worktree.ts";

/** Codes of the results the runner decides itself, without a worker. */
export const DEPENDENCY_FAILED = "DEPENDENCY_FAILED";
export const INTERRUPTED = "INTERRUPTED";

/**
 * A config task has its result. `started` is false when the swarm settled it
 * without handing it to the orchestrator (a dependency did not succeed, the
 * run was interrupted first, or the orchestrator refused it): no orchestrator
 * event tells about such a task.
 */
export interface TaskSettledEvent {
  type: "task_settled";
  task: { name: string; agent: string | undefined };
  result: TaskResult;
  started: boolean;
  /** Set for a task that worked in its own git worktree: its branch and commit, or that it changed nothing. */
  worktree?: WorktreeOutcome;
  /** True when the result was kept from the run being resumed instead of running the task. */
  carriedOver?: boolean;
  /** What the result depends on (the prompt it was sent, its worker's settings); absent for a task that never started. */
  fingerprint?: TaskFingerprint;
}

/** A resumed run runs this task again, and says why. */
export interface TaskRerunEvent {
  type: "task_rerun";
  task: { name: string; agent: string | undefined };
  reason: string;
  /** The claude session it continues, when its earlier attempt left one. */
  resumedSession: string | undefined;
}

/**
 * A task's dependencies are done and it is handed to the runner, with what
 * its result will depend on: the record can then say, before the task ends,
 * what it was started with.
 */
export interface TaskReadyEvent {
  type: "task_ready";
  task: { name: string; agent: string | undefined };
  fingerprint: TaskFingerprint;
}

/** What a swarm run reports beyond the orchestrator's events. */
export type SwarmEvent = TaskSettledEvent | TaskRerunEvent | TaskReadyEvent;

/**
 * How a resumed run treats a task that is ready (its prompt filled in): keep
 * the result an earlier attempt left, or run it again, continuing the claude
 * session of that attempt when there is one.
 */
export type CarryDecision = { kind: "keep"; result: TaskResult } | { kind: "run"; reason: string; resumeSession?: string };

export interface RunSwarmOptions {
  config: ResolvedSwarmConfig;
  /** Where a ready task starts: the orchestrator here, or the coordinator of a distributed run. */
  orchestrator: TaskRunner;
  /** Aborted by the first Ctrl-C: nothing new starts, running tasks are stopped. */
  signal: AbortSignal;
  /** When resuming a run: decides, per ready task, whether it runs again. Absent: every task runs. */
  carryOver?: (task: ResolvedTask, fingerprint: TaskFingerprint) => CarryDecision | undefined;
  /**
   * The worktrees of tasks that ask for one (the caller keeps it to discard
   * them if the run is killed). Default: a new set named after a fresh run id.
   */
  worktrees?: RunWorktrees;
}

/** `20250601-123005-3f2a`: when the run started, and a few random characters so that two runs never share branch names. */
export function newRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, "")
    .replaceAll(/[-:]/g, "")
    .replace("T", "-");
  return `${stamp}-${randomUUID().slice(0, 4)}`;
}

/** A result for a task that never ran. */
export function unrunResult(task: ResolvedTask, status: TaskStatus, error: { code: string; message: string }): TaskResult {
  return resultWithoutTurn({ id: randomUUID().slice(0, 8), name: task.name, agent: task.agent }, status, error);
}

/**
 * Runs a swarm's tasks in dependency order: a task is handed to the
 * orchestrator (which applies the concurrency limits, retries and budget)
 * once every task it depends on has succeeded, with {{results.x}} filled in
 * from their final texts. A task whose dependency did not succeed is skipped
 * and says which one. Starts at once; the stream has one task_settled event
 * per task, in the order they settle, and ends when every task has one.
 */
export function runSwarm({ config, orchestrator, signal, worktrees: given, carryOver }: RunSwarmOptions): AsyncIterable<SwarmEvent> {
  const events = new AsyncQueue<SwarmEvent>();
  const results = new Map<string, TaskResult>();
  const outcomes = new Map<string, WorktreeOutcome>();
  const names = new Set(config.tasks.map((task) => task.name));
  const worktrees = given ?? new RunWorktrees(newRunId(), config.keep_worktrees);
  // Linear in the tasks: each waits on a count of unfinished dependencies, and a task's end visits only the tasks that wait on it.
  const unfinished = new Map<ResolvedTask, number>();
  const dependents = new Map<string, ResolvedTask[]>();
  const ready: ResolvedTask[] = [];
  for (const task of config.tasks) {
    const waitsOn = new Set(task.depends_on);
    unfinished.set(task, waitsOn.size);
    if (waitsOn.size === 0) ready.push(task);
    for (const name of waitsOn) {
      const list = dependents.get(name);
      if (list === undefined) dependents.set(name, [task]);
      else list.push(task);
    }
  }

  const settle = (
    task: ResolvedTask,
    result: TaskResult,
    started: boolean,
    extra: { worktree?: WorktreeOutcome; fingerprint?: TaskFingerprint; carriedOver?: boolean } = {},
  ) => {
    results.set(task.name, result);
    if (extra.worktree !== undefined) outcomes.set(task.name, extra.worktree);
    for (const next of dependents.get(task.name) ?? []) {
      const left = unfinished.get(next);
      if (left === undefined) continue;
      unfinished.set(next, left - 1);
      if (left === 1) ready.push(next);
    }
    events.push({
      type: "task_settled",
      task: { name: task.name, agent: task.agent },
      result,
      started,
      ...(extra.worktree && { worktree: extra.worktree }),
      ...(extra.fingerprint && { fingerprint: extra.fingerprint }),
      ...(extra.carriedOver && { carriedOver: true }),
    });
  };

  /** What {{results.<task>…}} reads: a task that changed nothing in its worktree has no branch, and stands for the commit it started from. */
  const fieldsOf = (name: string): ResultFields | undefined => {
    const result = results.get(name);
    if (result === undefined) return undefined;
    const worktree = outcomes.get(name);
    return {
      text: result.text,
      structured: result.structuredOutput,
      ...(worktree !== undefined && { branch: worktree.branch ?? worktree.base, commit: worktree.commit ?? worktree.base }),
    };
  };

  const advance = () => {
    if (signal.aborted) {
      // Nothing starts any more: every task still waiting is cancelled (those running end by the signal).
      for (const [task, left] of unfinished) {
        if (left > 0) ready.push(task);
        unfinished.delete(task);
      }
    }
    // Skipping a task readies the tasks that wait on it: go on until none is ready.
    // By index, not shift(): a fan-out readies a hundred thousand tasks at once.
    for (let i = 0; i < ready.length; i++) {
      const task = ready[i]!;
      unfinished.delete(task);
      if (results.has(task.name)) continue;
      if (signal.aborted) {
        settle(task, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "interrupted before it started" }), false);
        continue;
      }
      const failed = task.depends_on.find((name) => results.get(name)?.status !== "succeeded");
      if (failed !== undefined) {
        const message = `dependency "${failed}" ${results.get(failed)?.status}`;
        settle(task, unrunResult(task, "skipped", { code: DEPENDENCY_FAILED, message }), false);
      } else {
        start(task);
      }
    }
    ready.length = 0;
    if (results.size === config.tasks.length) {
      // Given worktrees are the caller's to dispose of.
      if (given === undefined) void worktrees.dispose();
      events.end();
    }
  };

  const start = (task: ResolvedTask) => {
    const prompt = fillResults(task.prompt, names, fieldsOf);
    const fingerprint = taskFingerprint(config, task, prompt, Object.fromEntries(task.depends_on.map((name) => [name, fieldsOf(name)])));
    const decision = carryOver?.(task, fingerprint);
    if (decision?.kind === "keep") {
      // Settled on the next tick, so that advance() finishes its pass over the waiting tasks first.
      queueMicrotask(() => {
        settle(task, decision.result, false, { fingerprint, carriedOver: true });
        advance();
      });
      return;
    }
    const spec = taskSpecFor(task, prompt, signal);
    events.push({ type: "task_ready", task: { name: task.name, agent: task.agent }, fingerprint });
    if (decision?.kind === "run") {
      events.push({
        type: "task_rerun",
        task: { name: task.name, agent: task.agent },
        reason: decision.reason,
        resumedSession: decision.resumeSession,
      });
      if (decision.resumeSession !== undefined) spec.worker = { ...spec.worker, resume: decision.resumeSession };
    }
    let open: OpenWorktree | undefined;
    const { worktree } = task;
    if (worktree !== undefined) {
      spec.prepareWorker = async () => {
        const base = fillResults(worktree.base ?? worktree.start, names, fieldsOf);
        open = await worktrees.open({ task: task.name, repo: worktree.repo, cwd: task.cwd ?? config.defaults.cwd, base });
        return { cwd: open.cwd };
      };
    }
    const runResumingOrAnew = async (): Promise<TaskResult> => {
      const ran = await orchestrator.run(spec);
      const session = spec.worker?.resume;
      if (session === undefined || ran.error?.code !== SESSION_NOT_FOUND || signal.aborted) return ran;
      // Its session is on another host of a distributed run, or its files are gone: the task starts anew.
      events.push({
        type: "task_rerun",
        task: { name: task.name, agent: task.agent },
        reason: `its session ${session} is not where it runs now; it starts a new one`,
        resumedSession: undefined,
      });
      if (open !== undefined) {
        await worktrees.close(open, ran.status).catch(() => undefined);
        open = undefined;
      }
      const { resume: _, ...worker } = spec.worker ?? {};
      return orchestrator.run({ ...spec, worker });
    };
    runResumingOrAnew().then(
      async (ran) => {
        // Stopped by the run's interrupt, or its worker died from the same Ctrl-C (the terminal signals the whole
        // process group): interrupted, whatever the worker said (the CLI's own words are internal diagnostics).
        const interrupted = signal.aborted && (ran.status === "failed" || ran.status === "cancelled");
        let result: TaskResult = interrupted ? { ...ran, status: "cancelled", error: { code: INTERRUPTED, message: "interrupted" } } : ran;
        let outcome: WorktreeOutcome | undefined;
        if (open !== undefined) {
          try {
            outcome = await worktrees.close(open, result.status);
          } catch (error) {
            const { code, message } = error as { code: string; message: string };
            result = { ...result, status: "failed", error: { code, message } };
          }
        }
        settle(task, result, true, { worktree: outcome, fingerprint });
        advance();
      },
      // The orchestrator refuses a task it cannot run (e.g. a prompt left empty by an empty dependency result).
      (error: unknown) => {
        const { code = "INVALID_TASK", message = String(error) } = error as { code?: string; message?: string };
        settle(task, unrunResult(task, "failed", { code, message }), false);
        advance();
      },
    );
  };

  signal.addEventListener("abort", advance, { once: true });
  advance();
  return events;
}
