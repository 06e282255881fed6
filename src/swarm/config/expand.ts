// for_each made into tasks: a copy per item listed, or a map over a dependency's result made at run time.
import { type ConfigIssue, formatPath, issue, type PathSegment } from "./issues.ts";
import { DEFAULT_MAX_ITEMS, type ForEachItem, type TaskConfig } from "./schema.ts";
import { substituteItem, usesItem } from "./template.ts";

/** One task after for_each: a copy per item, with {{item}} filled in. */
export interface ExpandedTask {
  name: string;
  /** The name as written (with {{item}} for a for_each task). */
  template: string;
  /** Where the task is in the config's `tasks` list. */
  index: number;
  item?: ForEachItem;
  /** Where the item is in the task's for_each list. */
  item_index?: number;
  entry: TaskConfig;
  prompt: string;
  cwd?: string;
  /** depends_on entries with {{item}} filled in, not yet resolved to tasks. */
  depends_on: string[];
  /** worktree.base with {{item}} filled in. */
  worktree_base?: string;
  /** A for_each over a dependency's result: its copies are made when the run has that result. */
  map?: MapSpec;
}

/** A for_each over a result, as the runner needs it to make the copies. */
export interface MapSpec {
  /** The placeholder as written: "{{results.plan.structured.files}}". */
  from: string;
  max_items: number;
  /** The copies' name: the task's, or "<name>-{{index}}" when the name tells no copy apart. */
  copy_name: string;
}

const FIELDS = ["name", "prompt", "cwd"] as const;

function worktreeBase(entry: TaskConfig): string | undefined {
  return typeof entry.worktree === "object" ? entry.worktree.base : undefined;
}

/**
 * Applies for_each, then checks the names: {{item}} outside a for_each task,
 * item fields that do not exist, and names used twice all become issues.
 */
export function expandTasks(entries: TaskConfig[]): { tasks: ExpandedTask[]; issues: ConfigIssue[] } {
  const tasks: ExpandedTask[] = [];
  const issues: ConfigIssue[] = [];

  entries.forEach((entry, index) => {
    if (typeof entry.for_each === "string") {
      tasks.push(mapTask(entry, index, issues));
      return;
    }
    if (entry.max_items !== undefined) {
      issues.push(
        issue(["tasks", index, "max_items"], "max_items applies to a for_each over a result", 'remove it, or give for_each: "{{results.<task>…}}"'),
      );
    }
    if (entry.for_each === undefined) {
      for (const field of FIELDS) {
        if (usesItem(entry[field] ?? "")) issues.push(noForEach(["tasks", index, field]));
      }
      if (usesItem(worktreeBase(entry) ?? "")) issues.push(noForEach(["tasks", index, "worktree", "base"]));
      (entry.depends_on ?? []).forEach((dependency, k) => {
        // A for_each task named as written ("review-{{item}}") is a valid group reference here.
        if (!entries.some((other) => other.for_each !== undefined && other.name === dependency) && usesItem(dependency)) {
          issues.push(noForEach(["tasks", index, "depends_on", k]));
        }
      });
      tasks.push({
        ...base(entry, index),
        prompt: entry.prompt,
        ...(entry.cwd !== undefined && { cwd: entry.cwd }),
        depends_on: entry.depends_on ?? [],
        ...(worktreeBase(entry) !== undefined && { worktree_base: worktreeBase(entry) }),
      });
      return;
    }
    entry.for_each.forEach((item, itemIndex) => {
      const missing = new Set<string>();
      const fill = (text: string) => {
        const result = substituteItem(text, item, itemIndex);
        for (const field of result.missing) missing.add(field);
        return result.text;
      };
      tasks.push({
        ...base(entry, index),
        name: fill(entry.name),
        item,
        item_index: itemIndex,
        prompt: fill(entry.prompt),
        ...(entry.cwd !== undefined && { cwd: fill(entry.cwd) }),
        depends_on: (entry.depends_on ?? []).map(fill),
        ...(worktreeBase(entry) !== undefined && { worktree_base: fill(worktreeBase(entry) ?? "") }),
      });
      for (const field of missing) {
        issues.push(issue(["tasks", index, "for_each", itemIndex], `item has no field "${field}" (the task uses {{item.${field}}})`));
      }
    });
  });

  issues.push(...duplicateNames(tasks));
  return { tasks, issues };
}

/** A for_each over a result stays one task until the run has the list; {{item}} and {{index}} stay in it. */
function mapTask(entry: TaskConfig, index: number, issues: ConfigIssue[]): ExpandedTask {
  (entry.depends_on ?? []).forEach((dependency, k) => {
    if (usesItem(dependency)) {
      issues.push(
        issue(["tasks", index, "depends_on", k], "a for_each over a result has one depends_on for all its copies", "name the tasks without {{item}}"),
      );
    }
  });
  return {
    ...base(entry, index),
    prompt: entry.prompt,
    ...(entry.cwd !== undefined && { cwd: entry.cwd }),
    depends_on: entry.depends_on ?? [],
    ...(worktreeBase(entry) !== undefined && { worktree_base: worktreeBase(entry) }),
    map: {
      from: String(entry.for_each),
      max_items: entry.max_items ?? DEFAULT_MAX_ITEMS,
      copy_name: usesItem(entry.name) ? entry.name : `${entry.name}-{{index}}`,
    },
  };
}

function base(entry: TaskConfig, index: number) {
  return { name: entry.name, template: entry.name, index, entry };
}

function noForEach(path: PathSegment[]): ConfigIssue {
  return issue(path, "{{item}} is only filled in for a task with for_each", "add for_each: [...] to the task, or remove the placeholder");
}

function where(task: ExpandedTask): string {
  return formatPath(task.item_index === undefined ? ["tasks", task.index] : ["tasks", task.index, "for_each", task.item_index]);
}

function duplicateNames(tasks: ExpandedTask[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const first = new Map<string, ExpandedTask>();
  const reportedTemplates = new Set<number>();
  for (const task of tasks) {
    const earlier = first.get(task.name);
    if (earlier === undefined) {
      first.set(task.name, task);
      continue;
    }
    if (earlier.index === task.index && !usesItem(task.template)) {
      // The name does not depend on the item, so every copy gets the same one: say it once.
      if (!reportedTemplates.has(task.index)) {
        reportedTemplates.add(task.index);
        issues.push(
          issue(["tasks", task.index, "name"], `every for_each copy is named "${task.name}"`, "put {{item}} or {{item.field}} in the name"),
        );
      }
      continue;
    }
    if (task.item_index !== undefined) {
      issues.push(
        issue(
          ["tasks", task.index, "for_each", task.item_index],
          `gives the task name "${task.name}", which ${where(earlier)} has too`,
          "task names must be unique",
        ),
      );
      continue;
    }
    issues.push(issue(["tasks", task.index, "name"], `duplicate task name "${task.name}" (${where(earlier)} has it too)`));
  }
  return issues;
}
