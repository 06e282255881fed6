// runSwarm: a swarm's tasks in dependency order, with conditions, maps and loops, over a task runner.
import { randomUUID } from "node:crypto";
import type { TaskResult, TaskRunner, TaskSpec } from "../orchestrator/index.ts";
import { AsyncQueue } from "../util/async-queue.ts";
import { SESSION_NOT_FOUND } from "../worker/index.ts";
import { Conditions } from "./conditions.ts";
import { fillResults, type ResolvedSwarmConfig, type ResolvedTask, type ResultFields, taskSpecFor } from "./config/index.ts";
import { Dependencies } from "./dependencies.ts";
import { type TaskFingerprint, taskFingerprint } from "./fingerprint.ts";
import { type LoopEndedEvent, type LoopHost, type LoopRun, startLoops, stepLoop } from "./loop.ts";
import { makeCopies, mapResult } from "./map.ts";
import { INTERRUPTED, unrunResult } from "./unrun.ts";
import { type OpenWorktree, RunWorktrees, type WorktreeOutcome } from "./worktree.ts";

/** How many of the tasks waiting on others each pass may prepare processes for: the runner bounds the processes, this the work per pass. */
const PREPARED_AT_ONCE = 8;

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
  /**
   * With carriedOver: the earlier attempt's task whose result this is, when it had another name (a script's call made
   * in another order); null when the result comes from a run the record has no row of (a Claude Code run's call).
   */
  carriedFrom?: string | null;
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

/** A task made while the run goes on: a copy of a for_each over a result, a round of a loop task, or a task an agent posted (with its prompt). */
export type AddedTask = Pick<ResolvedTask, "name" | "template" | "agent" | "depends_on" | "when" | "item" | "copy_of" | "round_of" | "posted"> & {
  /** A posted task's prompt: the record keeps it, so that a resumed run can post it again. */
  prompt?: string;
};

/**
 * Tasks the run made as it went: the copies of a for_each over a result once
 * its list was known (`parent` is the task), a loop's next round (`parent`
 * is the loop), or a task an agent posted (`parent` is the task that posted
 * it). Each of them settles like any task.
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
export type CarryDecision =
  /** `from`: the earlier attempt's task whose result this is, when it had another name (a copy whose item moved in its list). */
  { kind: "keep"; result: TaskResult; from?: string } | { kind: "run"; reason: string; resumeSession?: string };

export interface RunSwarmOptions {
  config: ResolvedSwarmConfig;
  /** Where a ready task starts: the orchestrator here, or the coordinator of a distributed run. */
  orchestrator: TaskRunner;
  /** Aborted by the first Ctrl-C: nothing new starts, running tasks are stopped. */
  signal: AbortSignal;
  /** When resuming a run: decides, per ready task, whether it runs again. Absent: every task runs. */
  carryOver?: (task: ResolvedTask, fingerprint: TaskFingerprint) => CarryDecision | undefined;
  /** Where tasks that agents post come in (see PostIntake). Absent: nothing is posted. */
  posts?: PostIntake;
  /**
   * The worktrees of tasks that ask for one (the caller keeps it to discard
   * them if the run is killed). Default: a new set named after a fresh run id.
   */
  worktrees?: RunWorktrees;
}

/**
 * Where tasks posted while the run goes on come in: the run opens it once, as
 * it starts, with the way in. `add` puts a posted task into the graph, to run
 * as any task; it returns false when the task's name is taken or the run is over.
 * `stopping` is the run's signal: once it aborts, a task added would be cancelled at once.
 */
export interface PostIntake {
  open(add: (task: ResolvedTask) => boolean, stopping: AbortSignal): void;
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
export function runSwarm(options: RunSwarmOptions): AsyncIterable<SwarmEvent> {
  return new GraphRun(options).events;
}

/** What a task's end brings beside its result. */
type SettleExtra = { worktree?: WorktreeOutcome; fingerprint?: TaskFingerprint; carriedOver?: boolean; carriedFrom?: string };

/** One run of a swarm's graph: its tasks' results, what waits on what, the maps and loops under way. */
class GraphRun {
  readonly events = new AsyncQueue<SwarmEvent>();
  readonly #config: ResolvedSwarmConfig;
  readonly #runner: TaskRunner;
  readonly #signal: AbortSignal;
  readonly #carryOver: RunSwarmOptions["carryOver"];
  /** Given worktrees are the caller's to dispose of. */
  readonly #ownWorktrees: boolean;
  readonly #worktrees: RunWorktrees;
  readonly #results = new Map<string, TaskResult>();
  readonly #outcomes = new Map<string, WorktreeOutcome>();
  /** The config's task names: what {{results.<name>}} may read. */
  readonly #names: ReadonlySet<string>;
  /** Every name in use: the config's, and those the run made (copies, rounds). */
  readonly #taken: Set<string>;
  /** How many tasks will have a result: the config's, and those the run makes. */
  #taskCount: number;
  readonly #waiting = new Dependencies<ResolvedTask>();
  readonly #loops: LoopRun[];
  readonly #loopHost: LoopHost;
  /** By for_each task: its copies, until they have all ended; and then what {{results.<task>.all}} reads. */
  readonly #mapping = new Map<ResolvedTask, ResolvedTask[]>();
  readonly #copiesOf = new Map<string, unknown[]>();
  /** Set once the conditions are compiled (which loads the evaluator only when some task has one). */
  #conditions: Conditions | undefined;
  /** Every task has its result and the stream has ended: nothing joins any more. */
  #over = false;

  constructor({ config, orchestrator, signal, worktrees, carryOver, posts }: RunSwarmOptions) {
    this.#config = config;
    this.#runner = orchestrator;
    this.#signal = signal;
    this.#carryOver = carryOver;
    this.#ownWorktrees = worktrees === undefined;
    this.#worktrees = worktrees ?? new RunWorktrees(newRunId(), config.keep_worktrees);
    this.#names = new Set(config.tasks.map((task) => task.name));
    this.#taken = new Set(this.#names);
    this.#taskCount = config.tasks.length;
    this.#loops = startLoops(config);
    this.#loopHost = {
      tasks: config.tasks,
      results: this.#results,
      signal,
      fieldsOf: this.#fieldsOf,
      settle: (task, result) => this.#settle(task, result, false),
      push: (event) => this.events.push(event),
      add: (loop, round) => this.#add(loop.loop.name, round, loop.round),
    };
    // A loop's tasks run as its rounds; the tasks themselves settle when the loop ends.
    for (const task of config.tasks) if (!this.#loops.some((loop) => loop.members.has(task.name))) this.#wait(task);
    signal.addEventListener("abort", () => this.#advance(), { once: true });
    posts?.open((task) => this.#post(task), signal);
    Conditions.of(config.tasks).then(
      (compiled) => {
        this.#conditions = compiled;
        this.#advance();
      },
      (error: unknown) => this.events.fail(error),
    );
  }

  #wait(task: ResolvedTask): void {
    this.#waiting.wait(task, (name) => this.#results.has(name));
  }

  #settle(task: Pick<ResolvedTask, "name" | "agent">, result: TaskResult, started: boolean, extra: SettleExtra = {}): void {
    this.#results.set(task.name, result);
    this.#waiting.ended(task.name);
    if (extra.worktree !== undefined) this.#outcomes.set(task.name, extra.worktree);
    this.events.push({
      type: "task_settled",
      task: { name: task.name, agent: task.agent },
      result,
      started,
      ...(extra.worktree && { worktree: extra.worktree }),
      ...(extra.fingerprint && { fingerprint: extra.fingerprint }),
      ...(extra.carriedOver && { carriedOver: true }),
      ...(extra.carriedFrom !== undefined && { carriedFrom: extra.carriedFrom }),
    });
  }

  /** What {{results.<task>…}} reads: a task that changed nothing in its worktree has no branch, and stands for the commit it started from. */
  readonly #fieldsOf = (name: string): ResultFields | undefined => {
    const result = this.#results.get(name);
    if (result === undefined) return undefined;
    const worktree = this.#outcomes.get(name);
    const copies = this.#copiesOf.get(name);
    return {
      text: result.text,
      structured: result.structuredOutput,
      ...(worktree !== undefined && { branch: worktree.branch ?? worktree.base, commit: worktree.commit ?? worktree.base }),
      ...(copies !== undefined && { all: copies }),
    };
  };

  /** Tasks made as the run goes (a map's copies, a loop's round) join it, and the stream says so. */
  #add(parent: string, tasks: ResolvedTask[], round?: number): void {
    for (const task of tasks) {
      this.#taskCount++;
      this.#taken.add(task.name);
      this.#wait(task);
    }
    const added = tasks.map(({ name, template, agent, depends_on, when, item, copy_of, round_of, posted, prompt }) => ({
      name,
      template,
      agent,
      depends_on,
      when,
      item,
      copy_of,
      round_of,
      ...(posted !== undefined && { posted, prompt }),
    }));
    this.events.push({ type: "tasks_added", parent, ...(round !== undefined && { round }), tasks: added });
  }

  /** A task an agent posted joins the run, named by the task that posted it; refused when its name is taken or the run is over. */
  #post(task: ResolvedTask): boolean {
    if (this.#over || this.#taken.has(task.name)) return false;
    this.#add(task.posted?.by ?? task.name, [task]);
    this.#advance();
    return true;
  }

  /** A for_each over a result whose dependencies succeeded: its copies join the run, or it fails saying what the list held. */
  #expand(task: ResolvedTask): void {
    const made = makeCopies(task, this.#names, this.#fieldsOf, this.#taken);
    if (made.ok) {
      this.#mapping.set(task, made.copies);
      this.#add(task.name, made.copies);
    } else this.#settle(task, unrunResult(task, "failed", made.error), false);
  }

  /** Settles each for_each over a result whose copies have all ended, as the list of their results. */
  #gather(): boolean {
    let changed = false;
    for (const [task, copies] of this.#mapping) {
      if (!copies.every((copy) => this.#results.has(copy.name))) continue;
      const { result, all } = mapResult(unrunResult(task, "succeeded", { code: "", message: "" }), copies, this.#results, this.#fieldsOf);
      this.#copiesOf.set(task.name, all);
      this.#mapping.delete(task);
      this.#settle(task, result.status === "succeeded" ? { ...result, error: undefined } : result, false);
      changed = true;
    }
    return changed;
  }

  /** Moves the run as far as it goes now: skips, starts, maps and loops, until nothing moves; ends the stream once every task has a result. */
  #advance(): void {
    const conditions = this.#conditions;
    if (conditions === undefined) return;
    let changed = true;
    // Skipping one task may settle the tasks that wait on it: repeat until nothing moves.
    while (changed) {
      changed = false;
      if (this.#signal.aborted && this.#waiting.size > 0) {
        // Nothing starts any more: every task still waiting is cancelled (those running end by the signal).
        for (const task of this.#waiting.takeAll())
          this.#settle(task, unrunResult(task, "cancelled", { code: INTERRUPTED, message: "interrupted before it started" }), false);
        changed = true;
      }
      for (let task = this.#waiting.takeReady(); task !== undefined; task = this.#waiting.takeReady()) {
        const verdict = conditions.decide(task, this.#results, this.#fieldsOf);
        if (!verdict.run) this.#settle(task, unrunResult(task, verdict.status, verdict.error), false);
        else if (task.map !== undefined) this.#expand(task);
        else this.#start(task);
        changed = true;
      }
      if (this.#gather()) changed = true;
      for (const loop of this.#loops) if (stepLoop(loop, this.#loopHost)) changed = true;
    }
    if (this.#results.size === this.#taskCount) {
      this.#over = true;
      if (this.#ownWorktrees) void this.#worktrees.dispose();
      this.events.end();
    } else this.#prepareNext();
  }

  /**
   * The tasks that wait on others (a planner's fan-out, a reducer): a process for each may start now on a core the
   * running tasks leave idle, so that it need not start when its turn comes; the runner says whether (TaskRunner.prepare).
   * One per task, a map's too: how many copies it will make is not known yet. None for a worktree, or a loop's round
   * (processes of their own), nor in a resumed run, where a task may keep its result or continue its session.
   */
  #prepareNext(): void {
    const runner = this.#runner;
    if (runner.prepare === undefined || this.#signal.aborted || this.#carryOver !== undefined) return;
    for (const task of this.#waiting.first(PREPARED_AT_ONCE)) {
      if (task.worktree === undefined && task.round_of === undefined) runner.prepare(taskSpecFor(task, task.prompt, this.#signal));
    }
  }

  #loopOf(task: ResolvedTask): LoopRun | undefined {
    return task.round_of === undefined ? undefined : this.#loops.find((loop) => loop.loop.name === task.round_of?.loop);
  }

  /** A ready task: kept from the run being resumed, or handed to the runner with its prompt filled in. */
  #start(task: ResolvedTask): void {
    const loop = this.#loopOf(task);
    // A posted prompt is a model's text: nothing in it is filled in.
    const prompt =
      task.posted !== undefined
        ? task.prompt
        : loop === undefined
          ? fillResults(task.prompt, this.#names, this.#fieldsOf)
          : loop.fill(task, this.#names, this.#fieldsOf);
    const inputs = Object.fromEntries(task.depends_on.map((name) => [name, this.#fieldsOf(name)]));
    const fingerprint = taskFingerprint(this.#config, task, prompt, inputs);
    const decision = this.#carryOver?.(task, fingerprint);
    if (decision?.kind === "keep") {
      // Settled on the next tick, so that #advance() finishes its pass over the waiting tasks first.
      queueMicrotask(() => {
        this.#settle(task, decision.result, false, {
          fingerprint,
          carriedOver: true,
          ...(decision.from !== undefined && { carriedFrom: decision.from }),
        });
        this.#advance();
      });
      return;
    }
    const who = { name: task.name, agent: task.agent };
    this.events.push({ type: "task_ready", task: who, fingerprint });
    if (decision?.kind === "run")
      this.events.push({ type: "task_rerun", task: who, reason: decision.reason, resumedSession: decision.resumeSession });
    // A round continues the session of the round before (unless the loop is fresh); a resumed run's own session wins.
    const session = (decision?.kind === "run" ? decision.resumeSession : undefined) ?? loop?.sessionToContinue(task, this.#results);
    const context: TaskStartContext = {
      config: this.#config,
      runner: this.#runner,
      signal: this.#signal,
      worktrees: this.#worktrees,
      names: this.#names,
      fieldsOf: this.#fieldsOf,
      push: (event) => this.events.push(event),
    };
    new TaskStart(context, task, prompt, session).run().then(
      ({ result, worktree }) => {
        this.#settle(task, result, true, { worktree, fingerprint });
        this.#advance();
      },
      // The orchestrator refuses a task it cannot run (e.g. a prompt left empty by an empty dependency result).
      (error: unknown) => {
        const { code = "INVALID_TASK", message = String(error) } = error as { code?: string; message?: string };
        this.#settle(task, unrunResult(task, "failed", { code, message }), false);
        this.#advance();
      },
    );
  }
}

/** What one task's start reads of its run. */
interface TaskStartContext {
  config: ResolvedSwarmConfig;
  runner: TaskRunner;
  signal: AbortSignal;
  worktrees: RunWorktrees;
  names: ReadonlySet<string>;
  fieldsOf: (name: string) => ResultFields | undefined;
  push: (event: TaskRerunEvent) => void;
}

/** One task handed to the runner: its worktree, a resumed session that is not there, and what the run's interrupt makes of its result. */
class TaskStart {
  readonly #run: TaskStartContext;
  readonly #task: ResolvedTask;
  readonly #spec: TaskSpec;
  #open: OpenWorktree | undefined;

  constructor(run: TaskStartContext, task: ResolvedTask, prompt: string, session: string | undefined) {
    this.#run = run;
    this.#task = task;
    this.#spec = taskSpecFor(task, prompt, this.#run.signal);
    if (session !== undefined) this.#spec.worker = { ...this.#spec.worker, resume: session };
    const { worktree } = task;
    if (worktree !== undefined) {
      this.#spec.prepareWorker = async () => {
        const { config, names, fieldsOf, worktrees } = this.#run;
        const base = fillResults(worktree.base ?? worktree.start, names, fieldsOf);
        this.#open = await worktrees.open({ task: task.name, repo: worktree.repo, cwd: task.cwd ?? config.defaults.cwd, base });
        return { cwd: this.#open.cwd };
      };
    }
  }

  /** Runs the task; rejects only when the runner refuses it. */
  async run(): Promise<{ result: TaskResult; worktree?: WorktreeOutcome }> {
    const result = this.#ofTheRun(await this.#resumingOrAnew());
    if (this.#open === undefined) return { result };
    try {
      return { result, worktree: await this.#run.worktrees.close(this.#open, result.status) };
    } catch (error) {
      const { code, message } = error as { code: string; message: string };
      return { result: { ...result, status: "failed", error: { code, message } } };
    }
  }

  async #resumingOrAnew(): Promise<TaskResult> {
    const { runner, signal } = this.#run;
    const ran = await runner.run(this.#spec);
    const session = this.#spec.worker?.resume;
    if (session === undefined || ran.error?.code !== SESSION_NOT_FOUND || signal.aborted) return ran;
    // Its session is on another host of a distributed run, or its files are gone: the task starts anew.
    this.#run.push({
      type: "task_rerun",
      task: { name: this.#task.name, agent: this.#task.agent },
      reason: `its session ${session} is not where it runs now; it starts a new one`,
      resumedSession: undefined,
    });
    if (this.#open !== undefined) {
      await this.#run.worktrees.close(this.#open, ran.status).catch(() => undefined);
      this.#open = undefined;
    }
    const { resume: _, ...worker } = this.#spec.worker ?? {};
    return runner.run({ ...this.#spec, worker });
  }

  /**
   * Stopped by the run's interrupt, or its worker died from the same Ctrl-C (the terminal signals the whole
   * process group): interrupted, whatever the worker said (the CLI's own words are internal diagnostics).
   * A task that failed of what stopped the run (the task that found no login) keeps its failure.
   */
  #ofTheRun(ran: TaskResult): TaskResult {
    const { signal } = this.#run;
    const stoppedBy = (signal.reason as { cause?: { code?: unknown } } | undefined)?.cause?.code;
    const ofTheStop = ran.status === "failed" && stoppedBy !== undefined && ran.error?.code === stoppedBy;
    const interrupted = signal.aborted && !ofTheStop && (ran.status === "failed" || ran.status === "cancelled");
    return interrupted ? { ...ran, status: "cancelled", error: { code: INTERRUPTED, message: "interrupted" } } : ran;
  }
}
