// Checks a config's when: and until: expressions against the tasks they read, before anything runs.
import { TaskStatusSchema } from "../../orchestrator/index.ts";
import { closest, didYouMean } from "../../util/did-you-mean.ts";
import { own } from "../../util/own.ts";
import { type Literal, loadExpressions, type ResultRead } from "../expressions/index.ts";
import type { ExpandedTask } from "./expand.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";

/** What the checks need to know of the task an expression reads. */
export interface ReadTarget {
  /** Its output schema (its own, else its agent's). */
  outputSchema?: Record<string, unknown>;
  inWorktree: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks every task's `when:` before anything runs: its syntax, that each
 * task it reads is one of the task's dependencies, and that each field it
 * reads exists, with a type that fits how it is used (against the read
 * task's output_schema, where it has one). Every problem, with its path.
 */
export async function checkConditions(
  tasks: readonly ExpandedTask[],
  dependsOn: ReadonlyMap<string, readonly string[]>,
  targetOf: (name: string) => ReadTarget | undefined,
  { allTaskNames }: { allTaskNames: boolean },
): Promise<ConfigIssue[]> {
  const conditional = tasks.filter((task) => task.entry.when !== undefined);
  if (conditional.length === 0) return [];
  const { compileExpression } = await loadExpressions();
  const names = tasks.map((task) => task.name);
  const issues = new Map<string, ConfigIssue>();
  const add = (item: ConfigIssue) => issues.set(`${item.path}\n${item.message}`, item);
  const compiled = new Map<number, ReturnType<typeof compileExpression>>();
  for (const task of conditional) {
    const path: PathSegment[] = ["tasks", task.index, "when"];
    // for_each copies share the expression: compile it once, check its reads against each copy's dependencies.
    const result = compiled.get(task.index) ?? compileExpression(task.entry.when!, path);
    compiled.set(task.index, result);
    if (!result.ok) for (const item of result.issues) add(item);
    const dependencies = dependsOn.get(task.name) ?? [];
    for (const read of result.ok ? result.expression.reads : result.reads) {
      const target = targetOf(read.task);
      if (target === undefined) {
        if (allTaskNames) add(issue(path, `${read.text}: no task is named "${read.task}"`, unknownTaskHint(read.task, names)));
      } else if (!dependencies.includes(read.task)) {
        add(issue(path, `${read.text}: "${read.task}" is not a dependency of this task`, `add "${read.task}" to its depends_on`));
      } else {
        const problem = checkField(read, target);
        if (problem !== undefined) add(issue(path, `${read.text}: ${problem.message}`, problem.hint));
      }
    }
  }
  return [...issues.values()];
}

/** A name CEL cannot write after a dot (`fix-docs`) is read as results["fix-docs"]. */
function unknownTaskHint(name: string, names: readonly string[]): string | undefined {
  const match = closest(name, names);
  if (match === undefined) return undefined;
  return IDENTIFIER.test(match) ? `did you mean "${match}"?` : `did you mean "${match}"? write it results["${match}"]`;
}

type Problem = { message: string; hint?: string };

const STATUSES = TaskStatusSchema.options;

/** Whether the field a read names can be in the read task's result (its output_schema), with a fitting type. */
export function checkField(read: ResultRead, target: ReadTarget): Problem | undefined {
  const [field, ...deeper] = read.path;
  if (field === undefined) return undefined;
  if (field !== "structured") {
    if (deeper.length > 0) return { message: `${field} is a string: it has no field "${deeper[0]}"` };
    if ((field === "branch" || field === "commit") && !target.inWorktree) {
      return { message: `the task does not run in a worktree, so its result has no ${field}`, hint: "give it worktree: true" };
    }
    if (field === "status") {
      const wrong = read.comparedWith.find((value) => typeof value !== "string" || !(STATUSES as readonly string[]).includes(value));
      if (wrong !== undefined) return { message: `a status is one of ${STATUSES.join(", ")}, not ${show(wrong)}`, hint: hintFor(wrong, STATUSES) };
    }
    return fits(read, ["string"], undefined);
  }
  if (target.outputSchema === undefined) return { message: "the task has no output_schema, so its result has no structured output" };
  let schema: Record<string, unknown> = target.outputSchema;
  for (const [depth, key] of deeper.entries()) {
    const next = propertyOf(schema, key);
    if (next === "unknown") return undefined;
    if (next === undefined) {
      const known = Object.keys(properties(schema) ?? {});
      const where = depth === 0 ? "its output_schema" : `structured.${deeper.slice(0, depth).join(".")} in its output_schema`;
      return {
        message: `${where} has no field "${key}"`,
        hint: didYouMean(key, known) ?? (known.length > 0 ? `its fields are ${known.join(", ")}` : undefined),
      };
    }
    schema = next;
  }
  if (deeper.length === 0) return undefined;
  const types = typesOf(schema);
  return types === undefined ? undefined : fits(read, types, Array.isArray(schema.enum) ? (schema.enum as unknown[]) : undefined);
}

function properties(schema: Record<string, unknown>): Record<string, unknown> | undefined {
  const value = schema.properties;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
}

/** The schema of a field, undefined when the schema has no such field, "unknown" when the schema cannot say (combinators, $ref, open objects). */
function propertyOf(schema: Record<string, unknown>, key: string): Record<string, unknown> | undefined | "unknown" {
  const declared = own(properties(schema), key);
  if (typeof declared === "object" && declared !== null) return declared as Record<string, unknown>;
  if (schema.$ref !== undefined || schema.anyOf !== undefined || schema.oneOf !== undefined || schema.allOf !== undefined) return "unknown";
  const extra = schema.additionalProperties ?? schema.patternProperties;
  if (typeof extra === "object" && extra !== null) return "unknown";
  if (extra === true || (properties(schema) === undefined && schema.type !== "object")) return "unknown";
  return undefined;
}

/** The JSON types a schema allows, from type, const or enum; undefined when it does not say. */
function typesOf(schema: Record<string, unknown>): string[] | undefined {
  const { type } = schema;
  if (typeof type === "string") return type === "integer" ? ["integer", "number"] : [type];
  if (Array.isArray(type)) return type.flatMap((item) => (item === "integer" ? ["integer", "number"] : [String(item)]));
  const values = Array.isArray(schema.enum) ? schema.enum : "const" in schema ? [schema.const] : undefined;
  return values === undefined ? undefined : [...new Set(values.map(jsonType))];
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" ? "number" : typeof value;
}

/** Does the field's type fit how the expression uses it: the literals it is compared with, and standing as a condition? */
function fits(read: ResultRead, types: readonly string[], allowed: readonly unknown[] | undefined): Problem | undefined {
  const described = types.filter((type) => type !== "integer").join(" or ");
  if (read.asCondition && !types.includes("boolean")) return { message: `is a ${described}, not true or false`, hint: "compare it with a value" };
  for (const value of read.comparedWith) {
    if (!types.includes(jsonType(value))) return { message: `is a ${described}, but is compared with ${show(value)}` };
    if (allowed !== undefined && !allowed.includes(value)) {
      return {
        message: `is one of ${allowed.map(show).join(", ")}, never ${show(value)}`,
        hint: hintFor(
          value,
          allowed.filter((item) => typeof item === "string"),
        ),
      };
    }
  }
  return undefined;
}

function hintFor(value: Literal, candidates: readonly string[]): string | undefined {
  return typeof value === "string" ? didYouMean(value, candidates) : undefined;
}

function show(value: unknown): string {
  return JSON.stringify(value);
}
