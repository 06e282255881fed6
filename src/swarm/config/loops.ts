// The loops of a swarm file: their tasks and until: condition checked, and the names of their rounds.
import type { Expression } from "../expressions/index.ts";
import { loadExpressions } from "../expressions/index.ts";
import { checkField, type ReadTarget } from "./conditions.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import type { LoopConfig } from "./schema.ts";
import { resultReferences } from "./template.ts";

/** A loop ready to run: its tasks (config names, in config order), its condition compiled. */
export interface ResolvedLoop {
  name: string;
  tasks: string[];
  until: Expression;
  max_rounds: number;
  /** The tasks whose rounds start new sessions; the others continue their session of the round before. */
  fresh: string[];
  /** Task name → the prompt it gets from round 2 on. */
  next_prompts: Record<string, string>;
}

/** What the checks read of a task (a ResolvedTask; named by shape, as resolve.ts imports this file). */
interface LoopTask {
  name: string;
  index: number;
  prompt: string;
  depends_on: string[];
  map?: unknown;
}

/** `review#2`: round 2 of the loop task `review`. */
export function roundName(task: string, round: number): string {
  return `${task}#${round}`;
}

/** The loop task a round's name stands for ("review#2" → "review"), or undefined. */
export function roundBase(name: string): string | undefined {
  return /^(.+)#\d+$/.exec(name)?.[1];
}

/**
 * Checks the loops and compiles their conditions: each task exists, is in one
 * loop at most and is not a for_each over a result; `until` is a valid
 * expression that reads the loop's own tasks (a condition that reads none of
 * them could never change); {{previous.<task>}} names a task of the same loop;
 * and no task outside the loop sits between two of its tasks (it would wait
 * for the loop's end while the loop waits for it).
 */
export async function resolveLoops(
  loops: LoopConfig[],
  tasks: LoopTask[],
  targetOf: (name: string) => ReadTarget | undefined,
): Promise<{ loops: ResolvedLoop[]; issues: ConfigIssue[] }> {
  const issues: ConfigIssue[] = [];
  const byName = new Map(tasks.map((task) => [task.name, task]));
  const inLoop = new Map<string, string>();
  const resolved: ResolvedLoop[] = [];
  const { compileExpression } = loops.length > 0 ? await loadExpressions() : { compileExpression: undefined };

  loops.forEach((loop, index) => {
    const at = (...path: PathSegment[]) => ["loops", index, ...path];
    const name = loop.name ?? loop.tasks.join("+");
    const members = new Set<string>();
    loop.tasks.forEach((task, k) => {
      const found = byName.get(task);
      if (found === undefined) issues.push(issue(at("tasks", k), `unknown task "${task}"`));
      else if (found.map !== undefined) issues.push(issue(at("tasks", k), `"${task}" is a for_each over a result; a loop cannot repeat it`));
      else if (inLoop.has(task)) issues.push(issue(at("tasks", k), `"${task}" is already in the loop "${inLoop.get(task)}"`));
      else {
        inLoop.set(task, name);
        members.add(task);
      }
    });
    for (const task of Object.keys(loop.next_prompts ?? {})) {
      if (!members.has(task)) issues.push(issue(at("next_prompts", task), `"${task}" is not a task of this loop`));
    }
    (Array.isArray(loop.fresh) ? loop.fresh : []).forEach((task, k) => {
      if (!members.has(task)) issues.push(issue(at("fresh", k), `"${task}" is not a task of this loop`));
    });
    const compiled = compileExpression?.(loop.until, at("until"));
    if (compiled !== undefined && !compiled.ok) issues.push(...compiled.issues);
    else if (compiled?.ok) {
      const reads = compiled.expression.tasks;
      const outside = reads.filter((task) => !members.has(task));
      if (!reads.some((task) => members.has(task))) {
        issues.push(
          issue(
            at("until"),
            "reads none of the loop's tasks, so it could never change",
            `read results.<task>… of ${[...members].join(", ") || "its tasks"}`,
          ),
        );
      } else if (outside.length > 0) {
        issues.push(issue(at("until"), `reads ${outside.map((task) => `"${task}"`).join(", ")}, not a task of this loop`));
      }
      // A field the read task's output_schema does not have (or types otherwise) would hold the loop to max_rounds.
      for (const read of compiled.expression.reads) {
        const target = members.has(read.task) ? targetOf(read.task) : undefined;
        const problem = target && checkField(read, target);
        if (problem) issues.push(issue(at("until"), `${read.text}: ${problem.message}`, problem.hint));
      }
      resolved.push({
        name,
        tasks: tasks.filter((task) => members.has(task.name)).map((task) => task.name),
        until: compiled.expression,
        max_rounds: loop.max_rounds,
        fresh: loop.fresh === true ? [...members] : Array.isArray(loop.fresh) ? loop.fresh : [],
        next_prompts: loop.next_prompts ?? {},
      });
    }
    issues.push(...between(members, tasks, at("tasks")));
  });

  issues.push(...previousReferences(tasks, loops, inLoop));
  return { loops: resolved, issues };
}

/** {{previous.<task>}} must name a task of the loop the text belongs to. */
function previousReferences(tasks: LoopTask[], loops: LoopConfig[], inLoop: Map<string, string>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const names = new Set(tasks.map((task) => task.name));
  const check = (text: string, path: PathSegment[], loop: string | undefined) => {
    for (const ref of resultReferences(text, names, true)) {
      if (loop === undefined)
        issues.push(issue(path, `{{previous.${ref.raw}}} is only filled in for a task in a loop`, "add the task to a loop's tasks"));
      else if (ref.task === undefined || inLoop.get(ref.task) !== loop) {
        issues.push(issue(path, `{{previous.${ref.raw}}}: "${ref.task ?? ref.raw}" is not a task of the loop "${loop}"`));
      }
    }
  };
  for (const task of tasks) check(task.prompt, ["tasks", task.index, "prompt"], inLoop.get(task.name));
  loops.forEach((loop, index) => {
    for (const [task, text] of Object.entries(loop.next_prompts ?? {})) check(text, ["loops", index, "next_prompts", task], inLoop.get(task));
  });
  return issues;
}

/** A task outside the loop that depends on one of its tasks while another of its tasks depends on it: the two would wait for each other. */
function between(members: ReadonlySet<string>, tasks: LoopTask[], path: PathSegment[]): ConfigIssue[] {
  const dependsOn = new Map(tasks.map((task) => [task.name, task.depends_on]));
  const reaches = new Map<string, boolean>();
  // Whether `name` (outside the loop) depends, directly or not, on a task of the loop.
  const reachesLoop = (name: string, seen: Set<string>): boolean => {
    const known = reaches.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) return false;
    seen.add(name);
    const result = (dependsOn.get(name) ?? []).some((next) => members.has(next) || reachesLoop(next, seen));
    reaches.set(name, result);
    return result;
  };
  const stuck = new Set<string>();
  for (const member of members) {
    for (const dependency of dependsOn.get(member) ?? []) {
      if (!members.has(dependency) && reachesLoop(dependency, new Set())) stuck.add(dependency);
    }
  }
  return [...stuck].map((name) =>
    issue(path, `"${name}" depends on a task of this loop and a task of the loop depends on it`, `add "${name}" to the loop's tasks`),
  );
}
