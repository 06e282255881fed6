// Whether a task whose dependencies have ended runs, is skipped (a false when:, a skipped dependency) or fails.
import type { TaskResult, TaskStatus } from "../orchestrator/index.ts";
import type { ResolvedTask, ResultFields } from "./config/index.ts";
import { type DependencyOutcome, type Expression, loadExpressions } from "./expressions/index.ts";

/** Codes of the skips (and failures) the runner decides for a task whose dependencies have ended. */
export const DEPENDENCY_FAILED = "DEPENDENCY_FAILED";
/** Its dependency was skipped on purpose (a condition was false, or one of its own dependencies was): no failure. */
export const DEPENDENCY_SKIPPED = "DEPENDENCY_SKIPPED";
/** Its `when:` was false. */
export const CONDITION_FALSE = "CONDITION_FALSE";
/** Its `when:` could not be evaluated (or compiled): the task fails. */
export const CONDITION_FAILED = "CONDITION_FAILED";

/** A skip that is the config's intent, not a failure: the run still succeeds (as in GitHub Actions). */
export function skippedOnPurpose(result: Pick<TaskResult, "status" | "error">): boolean {
  return result.status === "skipped" && (result.error?.code === CONDITION_FALSE || result.error?.code === DEPENDENCY_SKIPPED);
}

/** What becomes of a task whose dependencies have all ended. */
export type Verdict = { run: true } | { run: false; status: TaskStatus; error: { code: string; message: string } };

/**
 * The `when:` conditions of a run's tasks, compiled once, and the decision
 * for a task whose dependencies have ended: without a condition it runs when
 * every dependency succeeded; with one, when the condition holds (which,
 * calling no status function, also needs every dependency to have succeeded).
 */
export class Conditions {
  readonly #compiled: ReadonlyMap<string, Expression | string>;
  readonly #tasks: ReadonlyMap<string, ResolvedTask>;

  private constructor(tasks: readonly ResolvedTask[], compiled: Map<string, Expression | string>) {
    this.#tasks = new Map(tasks.map((task) => [task.name, task]));
    this.#compiled = compiled;
  }

  /** Loads the expression evaluator only when some task has a condition. */
  static async of(tasks: readonly ResolvedTask[]): Promise<Conditions> {
    const compiled = new Map<string, Expression | string>();
    const conditional = tasks.filter((task) => task.when !== undefined);
    if (conditional.length > 0) {
      const { compileExpression } = await loadExpressions();
      for (const task of conditional) {
        const result = compileExpression(task.when!, ["when"]);
        // A config that was not validated (a library caller's): its task fails with the problem instead of the run.
        compiled.set(task.name, result.ok ? result.expression : result.issues.map((item) => item.message).join("; "));
      }
    }
    return new Conditions(tasks, compiled);
  }

  decide(task: ResolvedTask, results: ReadonlyMap<string, TaskResult>, fieldsOf: (name: string) => ResultFields | undefined): Verdict {
    const condition = this.#compiled.get(task.name);
    const unsucceeded = task.depends_on.filter((name) => results.get(name)?.status !== "succeeded");
    if (typeof condition === "string") return failed(`when: ${condition}`);
    if (condition === undefined || condition.statusFunctions.size === 0) {
      const failure = unsucceeded.find((name) => !skippedOnPurpose(results.get(name)!));
      if (failure !== undefined) return skipped(DEPENDENCY_FAILED, `dependency "${failure}" ${results.get(failure)?.status}`);
      if (unsucceeded[0] !== undefined) return skipped(DEPENDENCY_SKIPPED, `dependency "${unsucceeded[0]}" skipped`);
      if (condition === undefined) return { run: true };
    }
    const scope = {
      results: Object.fromEntries(task.depends_on.map((name) => [name, outcomeOf(results.get(name)!, fieldsOf(name))])),
      upstream: this.#upstream(task).map((name) => results.get(name)?.status ?? "skipped"),
    };
    try {
      return condition.holds(scope) ? { run: true } : skipped(CONDITION_FALSE, `when: ${condition.source} was false`);
    } catch (error) {
      return failed(`when: ${(error as Error).message}`);
    }
  }

  /** Every task `task` depends on, directly or through others. */
  #upstream(task: ResolvedTask): string[] {
    const seen = new Set<string>();
    const visit = (name: string) => {
      for (const dependency of this.#tasks.get(name)?.depends_on ?? []) {
        if (seen.has(dependency)) continue;
        seen.add(dependency);
        visit(dependency);
      }
    };
    visit(task.name);
    return [...seen];
  }
}

function skipped(code: string, message: string): Verdict {
  return { run: false, status: "skipped", error: { code, message } };
}

function failed(message: string): Verdict {
  return { run: false, status: "failed", error: { code: CONDITION_FAILED, message } };
}

function outcomeOf(result: TaskResult, fields: ResultFields | undefined): DependencyOutcome {
  return {
    status: result.status,
    text: result.text,
    ...(fields?.structured !== undefined && { structured: fields.structured }),
    ...(fields?.branch !== undefined && { branch: fields.branch }),
    ...(fields?.commit !== undefined && { commit: fields.commit }),
  };
}
