/**
 * A loop's rounds: each round runs a copy of each of its tasks ("write#2"),
 * reading the round before through {{previous.<task>}} and continuing that
 * round's claude session, until the loop's condition holds over the round's
 * results or max_rounds is reached.
 */
import { emptyUsage, type TaskResult, type TaskStatus } from "../orchestrator/index.ts";
import { DEPENDENCY_FAILED } from "./conditions.ts";
import type { ResolvedSwarmConfig, ResolvedTask, ResultFields } from "./config/index.ts";
import { type ResolvedLoop, roundName } from "./config/loops.ts";
import { fillResults } from "./config/template.ts";
import type { DependencyOutcome } from "./expressions/index.ts";
import { INTERRUPTED, unrunResult } from "./unrun.ts";

/** Codes a loop's tasks end with when the loop did not succeed. */
export const LOOP_MAX_ROUNDS = "LOOP_MAX_ROUNDS";
export const LOOP_ROUND_FAILED = "LOOP_ROUND_FAILED";

/** How a loop ended: its condition held, max_rounds was reached without it, or a round did not succeed. */
export type LoopStatus = "succeeded" | "max_rounds" | "failed" | "skipped" | "cancelled";

/** What a loop's round decided. */
export type RoundOutcome =
  | { kind: "next" }
  | { kind: "end"; status: LoopStatus; error?: { code: string; message: string }; results: Map<string, TaskResult> };

/** A loop ended: its condition held, max_rounds was reached, or a round did not succeed. */
export interface LoopEndedEvent {
  type: "loop_ended";
  loop: string;
  status: LoopStatus;
  rounds: number;
  error?: { code: string; message: string };
}

/** What a loop reads of the run, and how it settles its tasks and adds its rounds. */
export interface LoopHost {
  tasks: readonly ResolvedTask[];
  results: ReadonlyMap<string, TaskResult>;
  signal: AbortSignal;
  fieldsOf: (name: string) => ResultFields | undefined;
  settle: (task: ResolvedTask, result: TaskResult) => void;
  push: (event: LoopEndedEvent) => void;
  add: (loop: LoopRun, round: ResolvedTask[]) => void;
}

export function startLoops(config: ResolvedSwarmConfig): LoopRun[] {
  return (config.loops ?? []).map((loop) => new LoopRun(loop, config.tasks));
}

/** Starts, continues or ends a loop as the run's state allows; true when something moved. */
export function stepLoop(loop: LoopRun, host: LoopHost): boolean {
  const { results, signal } = host;
  const tasks = host.tasks.filter((task) => loop.members.has(task.name));
  if (tasks.every((task) => results.has(task.name))) return false;
  const end = (status: LoopStatus, byTask: (task: ResolvedTask) => TaskResult, error?: { code: string; message: string }) => {
    for (const task of tasks) host.settle(task, byTask(task));
    host.push({ type: "loop_ended", loop: loop.loop.name, status, rounds: loop.round, ...(error && { error }) });
    return true;
  };
  const stop = (status: LoopStatus, error: { code: string; message: string }) =>
    end(status, (task) => unrunResult(task, status === "skipped" ? "skipped" : "cancelled", error), error);
  if (loop.round === 0) {
    if (signal.aborted) return stop("cancelled", { code: INTERRUPTED, message: "interrupted before it started" });
    if (loop.dependencies.some((name) => !results.has(name))) return false;
    const failed = loop.dependencies.find((name) => results.get(name)?.status !== "succeeded");
    if (failed !== undefined) return stop("skipped", { code: DEPENDENCY_FAILED, message: `dependency "${failed}" ${results.get(failed)?.status}` });
  } else {
    if (!loop.roundEnded(results)) return false;
    const outcome = loop.afterRound(results, host.fieldsOf);
    if (outcome.kind === "end") return end(outcome.status, (task) => outcome.results.get(task.name)!, outcome.error);
    if (signal.aborted) return stop("cancelled", { code: INTERRUPTED, message: `interrupted after round ${loop.round}` });
  }
  host.add(loop, loop.nextRound());
  return true;
}

const PREVIOUS = /\{\{\s*previous\.[^{}]+?\s*\}\}/g;

export class LoopRun {
  readonly loop: ResolvedLoop;
  readonly members: ReadonlySet<string>;
  #round = 0;
  readonly #tasks: ResolvedTask[];

  constructor(loop: ResolvedLoop, tasks: readonly ResolvedTask[]) {
    this.loop = loop;
    this.members = new Set(loop.tasks);
    this.#tasks = tasks.filter((task) => this.members.has(task.name));
  }

  get round(): number {
    return this.#round;
  }

  /** The tasks outside the loop that its tasks wait for: the loop starts once they have ended. */
  get dependencies(): string[] {
    return [...new Set(this.#tasks.flatMap((task) => task.depends_on.filter((name) => !this.members.has(name))))];
  }

  /** The tasks of the next round: named "<task>#<round>", waiting on the same round's tasks. */
  nextRound(): ResolvedTask[] {
    this.#round += 1;
    const round = this.#round;
    return this.#tasks.map((task) => ({
      ...task,
      name: roundName(task.name, round),
      round_of: { task: task.name, round, loop: this.loop.name },
      prompt: round > 1 ? (this.loop.next_prompts[task.name] ?? task.prompt) : task.prompt,
      depends_on: task.depends_on.map((name) => (this.members.has(name) ? roundName(name, round) : name)),
    }));
  }

  /** A round's prompt: {{results.<task>}} of a loop task reads this round's, {{previous.<task>}} the round before's (nothing in round 1). */
  fill(instance: ResolvedTask, names: ReadonlySet<string>, fieldsOf: (name: string) => ResultFields | undefined): string {
    const round = instance.round_of?.round ?? 1;
    const now = (name: string) => fieldsOf(this.members.has(name) ? roundName(name, round) : name);
    const filled = fillResults(instance.prompt, names, now);
    if (round === 1) return filled.replace(PREVIOUS, "");
    return fillResults(filled, names, (name) => fieldsOf(roundName(name, round - 1)), true);
  }

  /** The claude session a round's task continues: its own of the round before, unless the loop is fresh. */
  sessionToContinue(instance: ResolvedTask, results: ReadonlyMap<string, TaskResult>): string | undefined {
    const of = instance.round_of;
    if (of === undefined || of.round === 1 || this.loop.fresh.includes(of.task)) return undefined;
    return results.get(roundName(of.task, of.round - 1))?.sessionId;
  }

  /** Whether every task of the current round has ended. */
  roundEnded(results: ReadonlyMap<string, TaskResult>): boolean {
    return this.loop.tasks.every((name) => results.has(roundName(name, this.#round)));
  }

  /**
   * After a round: the loop goes on, or ends; when it ends, the results its
   * tasks stand for (as their dependents and the record see them) are the
   * last round's, failed with a reason unless the condition held.
   */
  afterRound(results: ReadonlyMap<string, TaskResult>, fieldsOf: (name: string) => ResultFields | undefined): RoundOutcome {
    const round = this.#round;
    const last = new Map(this.loop.tasks.map((name) => [name, results.get(roundName(name, round))!]));
    const end = (status: LoopStatus, error?: { code: string; message: string }): RoundOutcome => {
      const ended = new Map<string, TaskResult>();
      for (const [name, result] of last) {
        const own = result.status !== "succeeded" ? { status: result.status, error: result.error } : undefined;
        // The round's own row counts its cost and turns; the task's row stands for the loop's outcome.
        ended.set(name, {
          ...result,
          name,
          costUsd: 0,
          usage: emptyUsage(),
          numTurns: 0,
          ...(error !== undefined && { status: "failed" as TaskStatus, error }),
          ...own,
        });
      }
      return { kind: "end", status, ...(error && { error }), results: ended };
    };
    const failed = [...last].find(([, result]) => result.status !== "succeeded");
    if (failed !== undefined) {
      const [name, result] = failed;
      const status = result.status === "cancelled" ? "cancelled" : "failed";
      return end(status, { code: LOOP_ROUND_FAILED, message: `round ${round}: "${roundName(name, round)}" ${result.status}` });
    }
    const outcomes: Record<string, DependencyOutcome> = {};
    for (const name of this.loop.tasks) outcomes[name] = { status: "succeeded", ...fieldsOf(roundName(name, round)) } as DependencyOutcome;
    let holds: boolean;
    try {
      holds = this.loop.until.holds({ results: outcomes, upstream: Object.values(outcomes).map((outcome) => outcome.status) });
    } catch (error) {
      const { code, message } = error as { code: string; message: string };
      return end("failed", { code, message: `until: ${message}` });
    }
    if (holds) return end("succeeded");
    if (round < this.loop.max_rounds) return { kind: "next" };
    return end("max_rounds", {
      code: LOOP_MAX_ROUNDS,
      message: `the loop "${this.loop.name}" ran ${round} round${round === 1 ? "" : "s"} (max_rounds) and ${this.loop.until.source} never held`,
    });
  }
}
