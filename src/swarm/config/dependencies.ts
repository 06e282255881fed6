// A task's dependencies: depends_on, and the {{results.<task>}} it reads, checked for unknown tasks and cycles.
import { didYouMean } from "../../util/did-you-mean.ts";
import type { ExpandedTask } from "./expand.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";
import { RESULT_FIELDS, type ResultField, resultReferences } from "./template.ts";

/** A {{results.<task>.<field>}} a task uses: where, of which task, and which field ("text" for the plain form). */
export interface ResultUse {
  path: PathSegment[];
  target: string;
  field: ResultField;
}

/**
 * Resolves every task's depends_on to task names (a for_each task named as
 * written stands for all of its copies) and checks the graph: unknown names,
 * cycles, and {{results.x…}} (in the prompt or the worktree base) for an x
 * the task does not wait for or a field results do not have. Without
 * `allTaskNames` (a task's name could not be read), a name no task has is
 * not called unknown. Returns task name → the names it depends on, and task
 * name → the result fields it uses.
 */
export function resolveDependencies(
  tasks: ExpandedTask[],
  { allTaskNames }: { allTaskNames: boolean },
): {
  dependsOn: Map<string, string[]>;
  uses: Map<string, ResultUse[]>;
  issues: ConfigIssue[];
} {
  const issues = new IssueSet();
  const names = new Set(tasks.map((task) => task.name));
  const groups = new Map<string, string[]>();
  for (const task of tasks) {
    if (task.item === undefined) continue;
    const group = groups.get(task.template);
    if (group === undefined) groups.set(task.template, [task.name]);
    else group.push(task.name);
  }
  const candidates = [...names, ...groups.keys()];

  const dependsOn = new Map<string, string[]>();
  const uses = new Map<string, ResultUse[]>();
  for (const task of tasks) {
    // A set keeps the order of first mention and makes a group of 100,000 copies one pass, not a scan per copy.
    const resolvedSet = new Set<string>();
    task.depends_on.forEach((entry, k) => {
      const targets = names.has(entry) ? [entry] : groups.get(entry);
      if (targets === undefined) {
        if (allTaskNames) issues.add(issue(["tasks", task.index, "depends_on", k], `unknown task "${entry}"`, didYouMean(entry, candidates)));
      } else {
        for (const target of targets) resolvedSet.add(target);
      }
    });
    const resolved = [...resolvedSet];
    // A duplicate name is reported elsewhere; the first task of that name keeps its edges.
    if (!dependsOn.has(task.name)) dependsOn.set(task.name, resolved);

    const places: [PathSegment[], string | undefined][] = [
      [["tasks", task.index, "prompt"], task.prompt],
      [["tasks", task.index, "worktree", "base"], task.worktree_base],
      [["tasks", task.index, "for_each"], task.map?.from],
    ];
    const used: ResultUse[] = [];
    for (const [path, text] of places) {
      for (const ref of resultReferences(text ?? "", names)) {
        const placeholder = `{{results.${ref.raw}}}`;
        if (ref.task === undefined) {
          if (allTaskNames) issues.add(issue(path, `${placeholder} refers to an unknown task "${ref.raw}"`, didYouMean(ref.raw, names)));
          continue;
        }
        const [field = "text", ...deeper] = ref.path;
        if (!(RESULT_FIELDS as readonly string[]).includes(field) || (deeper.length > 0 && field !== "structured")) {
          const hint = didYouMean(field, RESULT_FIELDS) ?? `a result has ${RESULT_FIELDS.join(", ")} (and structured.<field>)`;
          issues.add(issue(path, `${placeholder}: a result has no field "${ref.path.join(".")}"`, hint));
          continue;
        }
        used.push({ path, target: ref.task, field: field as ResultField });
        if (!resolvedSet.has(ref.task)) {
          issues.add(issue(path, `${placeholder} needs "${ref.task}" in depends_on`, `add "${ref.task}" to the task's depends_on`));
        }
      }
    }
    if (!uses.has(task.name)) uses.set(task.name, used);
  }

  for (const cycle of findCycles(tasks, dependsOn)) {
    const start = tasks.find((task) => task.name === cycle[0]);
    if (start === undefined) continue;
    const message = cycle.length === 2 ? `task "${cycle[0]}" depends on itself` : `dependency cycle: ${cycle.join(" → ")}`;
    issues.add(issue(["tasks", start.index, "depends_on"], message));
  }
  return { dependsOn, uses, issues: issues.list };
}

/** Each cycle once, as the path of names from a task back to itself. */
function findCycles(tasks: ExpandedTask[], dependsOn: Map<string, string[]>): string[][] {
  const state = new Map<string, "active" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const seen = new Set<string>();

  const visit = (name: string) => {
    state.set(name, "active");
    stack.push(name);
    for (const next of dependsOn.get(name) ?? []) {
      const nextState = state.get(next);
      if (nextState === "active") {
        const cycle = [...stack.slice(stack.indexOf(next)), next];
        const key = [...new Set(cycle)].sort().join("\n");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (nextState === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(name, "done");
  };
  for (const task of tasks) if (!state.has(task.name)) visit(task.name);
  return cycles;
}

/** for_each copies repeat the same mistake; report it once per place. */
class IssueSet {
  readonly list: ConfigIssue[] = [];
  readonly #keys = new Set<string>();

  add(item: ConfigIssue): void {
    const key = `${item.path}\n${item.message}`;
    if (this.#keys.has(key)) return;
    this.#keys.add(key);
    this.list.push(item);
  }
}
