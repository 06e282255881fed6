import { didYouMean } from "./did-you-mean.ts";
import type { ExpandedTask } from "./expand.ts";
import { type ConfigIssue, issue } from "./issues.ts";
import { resultReferences } from "./template.ts";

/**
 * Resolves every task's depends_on to task names (a for_each task named as
 * written stands for all of its copies) and checks the graph: unknown names,
 * cycles, and {{results.x}} for an x the task does not wait for.
 * Returns task name → the names it depends on.
 */
export function resolveDependencies(tasks: ExpandedTask[]): { dependsOn: Map<string, string[]>; issues: ConfigIssue[] } {
  const issues = new IssueSet();
  const names = new Set(tasks.map((task) => task.name));
  const groups = new Map<string, string[]>();
  for (const task of tasks) {
    if (task.item === undefined) continue;
    groups.set(task.template, [...(groups.get(task.template) ?? []), task.name]);
  }
  const candidates = [...names, ...groups.keys()];

  const dependsOn = new Map<string, string[]>();
  for (const task of tasks) {
    const resolved: string[] = [];
    task.depends_on.forEach((entry, k) => {
      const targets = names.has(entry) ? [entry] : groups.get(entry);
      if (targets === undefined) {
        issues.add(issue(["tasks", task.index, "depends_on", k], `unknown task "${entry}"`, didYouMean(entry, candidates)));
      } else {
        resolved.push(...targets.filter((target) => !resolved.includes(target)));
      }
    });
    // A duplicate name is reported elsewhere; the first task of that name keeps its edges.
    if (!dependsOn.has(task.name)) dependsOn.set(task.name, resolved);

    for (const ref of resultReferences(task.prompt)) {
      if (resolved.includes(ref)) continue;
      if (names.has(ref)) {
        const message = `{{results.${ref}}} needs "${ref}" in depends_on`;
        issues.add(issue(["tasks", task.index, "prompt"], message, `add "${ref}" to the task's depends_on`));
      } else {
        issues.add(issue(["tasks", task.index, "prompt"], `{{results.${ref}}} refers to an unknown task "${ref}"`, didYouMean(ref, names)));
      }
    }
  }

  for (const cycle of findCycles(tasks, dependsOn)) {
    const start = tasks.find((task) => task.name === cycle[0]);
    if (start === undefined) continue;
    const message = cycle.length === 2 ? `task "${cycle[0]}" depends on itself` : `dependency cycle: ${cycle.join(" → ")}`;
    issues.add(issue(["tasks", start.index, "depends_on"], message));
  }
  return { dependsOn, issues: issues.list };
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
  private readonly keys = new Set<string>();

  add(item: ConfigIssue): void {
    const key = `${item.path}\n${item.message}`;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    this.list.push(item);
  }
}
