// The placeholders of a task: {{item}}, {{results.<task>}} with its fields, and {{previous.<task>}} in a loop.

import { own } from "../../util/own.ts";
import type { ForEachItem } from "./schema.ts";

/**
 * The placeholders of a task: {{item}} / {{item.field}} / {{index}} (filled
 * in when for_each makes the task's copies), {{results.<task>}} with its
 * fields (filled in by the runner when the dependency has finished) and, in a
 * loop, {{previous.<task>}} (the round before). Any other {{…}} is ordinary text.
 */
const ITEM = /\{\{\s*item((?:\.[^\s{}.]+)*)\s*\}\}/g;
const INDEX = /\{\{\s*index\s*\}\}/g;
const RESULTS = /\{\{\s*results\.([^{}]+?)\s*\}\}/g;
const PREVIOUS = /\{\{\s*previous\.([^{}]+?)\s*\}\}/g;

/** Whether a text takes in a result at run time: {{results.…}} or {{previous.…}}. */
export function usesResults(text: string): boolean {
  return new RegExp(RESULTS.source).test(text) || new RegExp(PREVIOUS.source).test(text);
}

/** Whether a text uses {{item}}, {{item.field}} or {{index}}. */
export function usesItem(text: string): boolean {
  return new RegExp(ITEM.source).test(text) || new RegExp(INDEX.source).test(text);
}

function show(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * Fills {{item}} and {{item.a.b}} from one for_each item, {{index}} with its place (from 0). `missing` lists the
 * fields the text asked for that the item does not have.
 */
export function substituteItem(text: string, item: ForEachItem, index: number): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(INDEX, String(index)).replace(ITEM, (match, fields: string) => {
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

/** What a later task may read of a finished one. */
export interface ResultFields {
  text: string;
  /** Its structured output, with an output schema. */
  structured?: unknown;
  /** The branch its worktree's work is on (or, if it changed nothing, the commit it started from). */
  branch?: string;
  commit?: string;
  /** A for_each over a result: each copy's name, item, index, status, text and structured output. */
  all?: unknown[];
}

/** The fields {{results.<task>.<field>}} may name; `structured` may go on into the output's own fields; `all` is a for_each's copies. */
export const RESULT_FIELDS = ["text", "structured", "branch", "commit", "all"] as const;
export type ResultField = (typeof RESULT_FIELDS)[number];

/**
 * One {{results.…}} placeholder: the task it names and the field path after
 * it ([] for the text). Task names may hold dots (`review-a.ts`), so the
 * longest task name the reference starts with is the task.
 */
export interface ResultReference {
  /** As written between `results.` and `}}`. */
  raw: string;
  /** Undefined when no task name matches. */
  task?: string;
  path: string[];
}

function parseReference(raw: string, names: ReadonlySet<string>): ResultReference {
  let best: string | undefined;
  for (const name of names) {
    if ((raw === name || raw.startsWith(`${name}.`)) && (best === undefined || name.length > best.length)) best = name;
  }
  if (best === undefined) return { raw, path: [] };
  const rest = raw.slice(best.length + 1);
  return { raw, task: best, path: rest === "" ? [] : rest.split(".") };
}

/** The {{results.…}} (or, with `previous`, the {{previous.…}}) placeholders of a text, in order, without repeats. */
export function resultReferences(text: string, names: ReadonlySet<string>, previous = false): ResultReference[] {
  const raws = [...new Set(Array.from(text.matchAll(previous ? PREVIOUS : RESULTS), (match) => (match[1] ?? "").trim()))];
  return raws.map((raw) => parseReference(raw, names));
}

/** The value a reference names, or undefined when the result does not have it. */
export function valueAt(fields: ResultFields, path: readonly string[]): unknown {
  const [field, ...deeper] = path;
  if (field === undefined || field === "text") return deeper.length === 0 ? fields.text : undefined;
  if (field === "branch" || field === "commit" || field === "all") return deeper.length === 0 ? fields[field] : undefined;
  if (field !== "structured") return undefined;
  let value: unknown = fields.structured;
  for (const key of deeper) {
    value = typeof value === "object" && value !== null ? own(value as Record<string, unknown>, key) : undefined;
  }
  return value;
}

/**
 * Replaces each {{results.<task>}} (its text) and {{results.<task>.<field>}}
 * with what that task's result holds; a reference `lookup` cannot answer, or a
 * field the result lacks, stays as written. With `previous`, the same for
 * {{previous.<task>…}}.
 */
export function fillResults(text: string, names: ReadonlySet<string>, lookup: (task: string) => ResultFields | undefined, previous = false): string {
  return text.replace(previous ? PREVIOUS : RESULTS, (match, raw: string) => {
    const reference = parseReference(raw.trim(), names);
    const fields = reference.task === undefined ? undefined : lookup(reference.task);
    const value = fields === undefined ? undefined : valueAt(fields, reference.path);
    return value === undefined ? match : show(value);
  });
}
