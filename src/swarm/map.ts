/**
 * A for_each over a dependency's result: once the dependency has succeeded,
 * the list it holds becomes the task's copies, named, filled in and checked
 * as a for_each written in the file would be at load.
 */
import type { TaskResult } from "../orchestrator/index.ts";
import type { ForEachItem, ResolvedTask, ResultFields } from "./config/index.ts";
import { resultReferences, substituteItem, usesItem, valueAt } from "./config/template.ts";

/** Codes of a for_each over a result that could make no copies. */
export const MAP_NOT_A_LIST = "MAP_NOT_A_LIST";
export const MAP_TOO_MANY_ITEMS = "MAP_TOO_MANY_ITEMS";
export const MAP_BAD_ITEM = "MAP_BAD_ITEM";
/** A copy did not succeed: the task, as its dependents see it, did not either. */
export const MAP_COPY_FAILED = "MAP_COPY_FAILED";

export type Copies = { ok: true; copies: ResolvedTask[] } | { ok: false; error: { code: string; message: string } };

/** What a value is, in a few words, for an error message. */
function described(value: unknown): string {
  if (value === undefined) return "nothing";
  const json = JSON.stringify(value) ?? String(value);
  const kind = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : `a ${typeof value}`;
  return `${kind} (${json.length > 80 ? `${json.slice(0, 77)}...` : json})`;
}

/**
 * The copies of a for_each over a result, given what `lookup` reads of the
 * ended dependencies; `taken` are the names other tasks already have.
 */
export function makeCopies(
  task: ResolvedTask,
  names: ReadonlySet<string>,
  lookup: (name: string) => ResultFields | undefined,
  taken: ReadonlySet<string>,
): Copies {
  const map = task.map!;
  const fail = (code: string, message: string): Copies => ({ ok: false, error: { code, message } });
  const [reference] = resultReferences(map.from, names);
  const fields = reference?.task === undefined ? undefined : lookup(reference.task);
  const value = fields === undefined || reference === undefined ? undefined : valueAt(fields, reference.path);
  if (!Array.isArray(value)) return fail(MAP_NOT_A_LIST, `for_each: ${map.from.trim()} held ${described(value)}, not a list`);
  if (value.length > map.max_items) {
    return fail(MAP_TOO_MANY_ITEMS, `for_each: ${map.from.trim()} held ${value.length} items, more than max_items (${map.max_items})`);
  }
  const copies: ResolvedTask[] = [];
  const seen = new Set<string>();
  for (const [index, item] of value.entries()) {
    if (item === null || item === undefined || typeof item === "boolean" || Array.isArray(item)) {
      return fail(MAP_BAD_ITEM, `for_each: item ${index} of ${map.from.trim()} is ${described(item)}; items are strings, numbers or objects`);
    }
    const missing = new Set<string>();
    const fill = (text: string) => {
      const filled = substituteItem(text, item as ForEachItem, index);
      for (const field of filled.missing) missing.add(field);
      return filled.text;
    };
    const name = fill(map.copy_name);
    const prompt = fill(task.prompt);
    const cwd = task.cwd === undefined ? undefined : fill(task.cwd);
    const base = task.worktree?.base === undefined ? undefined : fill(task.worktree.base);
    if (missing.size > 0) {
      const field = [...missing][0];
      return fail(MAP_BAD_ITEM, `for_each: item ${index} of ${map.from.trim()} has no field "${field}" (the task uses {{item.${field}}})`);
    }
    if (seen.has(name) || taken.has(name)) return fail(MAP_BAD_ITEM, `for_each: item ${index} gives the task name "${name}", which another task has`);
    seen.add(name);
    const { map: _, ...rest } = task;
    copies.push({
      ...rest,
      name,
      item: item as ForEachItem,
      copy_of: { task: task.name, index },
      prompt,
      ...(usesItem(task.prompt) && { prompt_computed: true as const }),
      ...(cwd !== undefined && { cwd }),
      ...(task.worktree !== undefined && { worktree: { ...task.worktree, ...(base !== undefined && { base }) } }),
    });
  }
  return { ok: true, copies };
}

/**
 * The result a for_each over a result stands for once its copies have ended:
 * succeeded when all did (or there were none), its text and structured output
 * the copies' as lists, and `all` each copy in full.
 */
export function mapResult(
  template: TaskResult,
  copies: readonly ResolvedTask[],
  results: ReadonlyMap<string, TaskResult>,
  fields: (name: string) => ResultFields | undefined,
): { result: TaskResult; all: unknown[] } {
  const ended = copies.map((copy) => ({ copy, result: results.get(copy.name)! }));
  const failed = ended.find(({ result }) => result.status !== "succeeded");
  const all = ended.map(({ copy, result }) => ({
    name: copy.name,
    item: copy.item,
    index: copy.copy_of?.index,
    status: result.status,
    ...fields(copy.name),
  }));
  return {
    all,
    result: {
      ...template,
      status: failed === undefined ? "succeeded" : "failed",
      text: JSON.stringify(ended.map(({ result }) => result.text)),
      // Copies without an output schema have no structured output: nor has the list of them.
      structuredOutput: ended.some(({ result }) => result.structuredOutput !== undefined)
        ? ended.map(({ result }) => result.structuredOutput ?? null)
        : undefined,
      ...(failed !== undefined && { error: { code: MAP_COPY_FAILED, message: `copy "${failed.copy.name}" ${failed.result.status}` } }),
    },
  };
}
