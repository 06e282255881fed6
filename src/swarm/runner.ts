import { randomUUID } from "node:crypto";
import type { TaskResult, TaskRunner } from "../orchestrator/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { SESSION_NOT_FOUND } from "../worker/index.ts";
import { Conditions } from "./conditions.ts";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask, type ResultFields, taskSpecFor } from "./config/index.ts";
import { type TaskFingerprint, taskFingerprint } from "./fingerprint.ts";
import { type LoopEndedEvent, type LoopHost, type LoopRun, startLoops, stepLoop } from "./loop.ts";
import { makeCopies, mapResult } from "./map.ts";
import { INTERRUPTED, unrunResult } from "./unrun.ts";
import { type OpenWorktree, RunWorktrees, type WorktreeOutcome } from "./worktree.ts";

/** Codes of the results the runner decides itself, without a worker (see conditions.ts and unrun.ts). */
export { CONDITION_FAILED, CONDITION_FALSE, DEPENDENCY_FAILED, DEPENDENCY_SKIPPED, skippedOnPurpose } from "./conditions.ts";
export { INTERRUPTED, unrunResult } from "./unrun.ts";

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

/** A task made while the run goes on: a copy of a for_each over a result, or a round of a loop task. */
export type AddedTask = Pick<ResolvedTask, "name" | "template" | "agent" | "depends_on" | "when" | "item" | "copy_of" | "round_of">;

/**
 * Tasks the run made as it went: the copies of a for_each over a result once
 * its list was known (`parent` is the task), or a loop's next round (`parent`
 * is the loop). Each of them settles like any task.
 */
export interface TasksAddedEvent {
  type: "tasks_added";
  parent: string;
  /** A loop's round, from 1. */
  round?: number;
  tasks: AddedTask[];
}

/** What a swarm run reports beyond the orchestrator's events. */
export type SwarmEvent = TaskSettledEvent | TaskRerunEvent | TaskReadyEvent | TasksAddedEvent | LoopEndedEvent;

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

/**
 * Runs a swarm's tasks in dependency order: a task is handed to the
 * orchestrator (which applies the concurrency limits, retries and budget)
 * once every task it depends on has ended and either all of them succeeded
 * or its `when:` condition says so, with {{results.x}} filled in from their
 * results. A task that does not run is skipped and says why (which
 * dependency did not succeed, or which condition was false). Starts at once;
 * the stream has one task_settled event per task, in the order they settle,
 * and ends when every task has one.
 */
export function runSwarm({ config, orchestrator, signal, worktrees: given, carryOver }: RunSwarmOptions): AsyncIterable<SwarmEvent> {
  const events = new AsyncQueue<SwarmEvent>();
  const results = new Map<string, TaskResult>();
  const outcomes = new Map<string, WorktreeOutcome>();
  const names = new Set(config.tasks.map((task) => task.name));
  const worktrees = given ?? new RunWorktrees(newRunId(), config.keep_worktrees);
  const loops = startLoops(config);
  // Every task that will have a result: the config's, and those the run makes (copies, rounds).
  const all = [...config.tasks];
  const waiting = new Set<ResolvedTask>();
  // Linear in the tasks: each waiting task counts its unfinished dependencies, and a task's end visits only the tasks waiting on it.
  const unfinished = new Map<ResolvedTask, number>();
  const dependents = new Map<string, ResolvedTask[]>();
  const ready: ResolvedTask[] = [];
  const wait = (task: ResolvedTask) => {
    waiting.add(task);
    const on = new Set(task.depends_on.filter((name) => !results.has(name)));
    unfinished.set(task, on.size);
    if (on.size === 0) ready.push(task);
    for (const name of on) {
      const list = dependents.get(name);
      if (list === undefined) dependents.set(name, [task]);
      else list.push(task);
    }
  };
  const taken = new Set(names);
  /** By for_each task: its copies, until they have all ended; and then what {{results.<task>.all}} reads. */
  const mapping = new Map<ResolvedTask, ResolvedTask[]>();
  const copiesOf = new Map<string, unknown[]>();

  const settle = (
    task: Pick<ResolvedTask, "name" | "agent">,
    result: TaskResult,
    started: boolean,
    extra: { worktree?: WorktreeOutcome; fingerprint?: TaskFingerprint; carriedOver?: boolean } = {},
  ) => {
    results.set(task.name, result);
    for (const dependent of dependents.get(task.name) ?? []) {
      const left = (unfinished.get(dependent) ?? 1) - 1;
      unfinished.set(dependent, left);
      if (left === 0) ready.push(dependent);
    }
    dependents.delete(task.name);
    if (extra.worktree !== undefined) outcomes.set(task.name, extra.worktree);
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
    const copies = copiesOf.get(name);
    return {
      text: result.text,
      structured: result.structuredOutput,
      ...(worktree !== undefined && { branch: worktree.branch ?? worktree.base, commit: worktree.commit ?? worktree.base }),
      ...(copies !== undefined && { all: copies }),
    };
  };

  // Set once the conditions are compiled (which loads the evaluator only when some task has one).
  let conditions: Conditions | undefined;

  const add = (parent: string, tasks: ResolvedTask[], round?: number) => {
    for (const task of tasks) {
      all.push(task);
      taken.add(task.name);
      wait(task);
    }
    const added = tasks.map(({ name, template, agent, depends_on, when, item, copy_of, round_of }) => ({
      name,
      template,
      agent,
      depends_on,
      when,
      item,
      copy_of,
      round_of,
    }));
    events.push({ type: "tasks_added", parent, ...(round !== undefined && { round }), tasks: added });
  };

  /** A for_each over a result whose dependencies succeeded: its copies join the run, or it fails saying what the list held. */
  const expand = (task: ResolvedTask) => {
    const made = makeCopies(task, names, fieldsOf, taken);
    if (!made.ok) return settle(task, unrunResult(task, "failed", made.error), false);
    mapping.set(task, made.copies);
    add(task.name, made.copies);
  };

  /** Settles each for_each over a result whose copies have all ended, as the list of their results. */
  const gather = (): boolean => {
    let changed = false;
    for (const [task, copies] of mapping) {
      if (!copies.every((copy) => results.has(copy.name))) continue;
      const { result, all: every } = mapResult(unrunResult(task, "succeeded", { code: "", message: "" }), copies, results, fieldsOf);
      copiesOf.set(task.name, every);
      mapping.delete(task);
      settle(task, result.status === "succeeded" ? { ...result, error: undefined } : result, false);
      changed = true;
    }
    return changed;
  };

  const loopHost: LoopHost = {
    tasks: config.tasks,
    results,
    signal,
    fieldsOf,
    settle: (task, result) => settle(task, result, false),
    push: (event) => events.push(event),
    add: (loop, round) => add(loop.loop.name, round, loop.round),
  };
  const loopOf = (task: ResolvedTask): LoopRun | undefined =>
    task.round_of === undefined ? undefined : loops.find((loop) => loop.loop.name === task.round_of?.loop);

  const advance = () => {
    if (conditions === undefined) return;
    let changed = true;
    // Skipping one task may settle the tasks that wait on it: repeat until nothing moves.
    while (changed) {
      changed = false;
      if (signal.aborted && waiting.size > 0) {
        // Nothing starts any more: every task still waiting is cancelled (those running end by the signal).
        for (const task of waiting)
          settle(task, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "interrupted before it started" }), false);
        waiting.clear();
        changed = true;
      }
      // By index, not shift(): a fan-out readies a hundred thousand tasks at once, and a skip readies more as it goes.
      for (let i = 0; i < ready.length; i++) {
        const task = ready[i]!;
        if (!waiting.delete(task)) continue;
        unfinished.delete(task);
        const verdict = conditions.decide(task, results, fieldsOf);
        if (!verdict.run) settle(task, unrunResult(task, verdict.status, verdict.error), false);
        else if (task.map !== undefined) expand(task);
        else start(task);
        changed = true;
      }
      ready.length = 0;
      if (gather()) changed = true;
      for (const loop of loops) if (stepLoop(loop, loopHost)) changed = true;
    }
    if (results.size === all.length) {
      // Given worktrees are the caller's to dispose of.
      if (given === undefined) void worktrees.dispose();
      events.end();
    }
  };

  const start = (task: ResolvedTask) => {
    const loop = loopOf(task);
    const prompt = loop === undefined ? fillResults(task.prompt, names, fieldsOf) : loop.fill(task, names, fieldsOf);
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
    }
    // A round continues the session of the round before (unless the loop is fresh); a resumed run's own session wins.
    const session = (decision?.kind === "run" ? decision.resumeSession : undefined) ?? loop?.sessionToContinue(task, results);
    if (session !== undefined) spec.worker = { ...spec.worker, resume: session };
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
        // A task that failed of what stopped the run (the task that found no login) keeps its failure.
        const stoppedBy = (signal.reason as { cause?: { code?: unknown } } | undefined)?.cause?.code;
        const ofTheStop = ran.status === "failed" && stoppedBy !== undefined && ran.error?.code === stoppedBy;
        const interrupted = signal.aborted && !ofTheStop && (ran.status === "failed" || ran.status === "cancelled");
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

  // A loop's tasks run as its rounds; the tasks themselves settle when the loop ends.
  for (const task of config.tasks) if (!loops.some((loop) => loop.members.has(task.name))) wait(task);
  signal.addEventListener("abort", advance, { once: true });
  Conditions.of(config.tasks).then(
    (compiled) => {
      conditions = compiled;
      advance();
    },
    (error: unknown) => events.fail(error),
  );
  return events;
}
