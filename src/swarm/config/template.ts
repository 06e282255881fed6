import type { ForEachItem } from "./schema.ts";

/**
 * The two placeholders of a task: {{item}} / {{item.field}} (filled in when
 * for_each expands the task) and {{results.<task>}} (filled in by the runner
 * when the dependency has finished). Any other {{…}} is ordinary text.
 */
const ITEM = /\{\{\s*item((?:\.[^\s{}.]+)*)\s*\}\}/g;
const RESULTS = /\{\{\s*results\.([^{}]+?)\s*\}\}/g;

export function usesItem(text: string): boolean {
  return new RegExp(ITEM.source).test(text);
}

function show(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * Fills {{item}} and {{item.a.b}} from one for_each item. `missing` lists the
 * fields the text asked for that the item does not have.
 */
export function substituteItem(text: string, item: ForEachItem): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(ITEM, (match, fields: string) => {
    let value: unknown = item;
    for (const field of fields.split(".").slice(1)) {
      value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[field] : undefined;
      if (value === undefined) {
        missing.push(fields.slice(1));
        return match;
      }
    }
    return show(value);
  });
  return { text: out, missing };
}

/** The task names a prompt refers to with {{results.<task>}}, in order, without repeats. */
export function resultReferences(text: string): string[] {
  return [...new Set(Array.from(text.matchAll(RESULTS), (match) => (match[1] ?? "").trim()))];
}

/** Replaces each {{results.<task>}} with that task's result; references `lookup` cannot answer stay as written. */
export function fillResults(text: string, lookup: (task: string) => string | undefined): string {
  return text.replace(RESULTS, (match, name: string) => lookup(name.trim()) ?? match);
}
