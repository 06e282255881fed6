// zod's issues turned into config issues a person can act on: did-you-mean keys, types said in plain words.
import type { z } from "zod";
import { didYouMean } from "../../util/did-you-mean.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";

/**
 * Turns zod's issues into ConfigIssues a person can act on: one per unknown
 * key with a "did you mean", plain-words type errors, the branch of a union
 * the value was evidently meant for.
 */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], schema: z.core.$ZodType): ConfigIssue[] {
  return issues.flatMap((zodIssue) => convert(zodIssue, [], schema));
}

function convert(zodIssue: z.core.$ZodIssue, base: PathSegment[], schema: z.core.$ZodType): ConfigIssue[] {
  const path = [...base, ...(zodIssue.path as PathSegment[])];
  switch (zodIssue.code) {
    case "unrecognized_keys": {
      const known = knownKeysAt(schema, path);
      return zodIssue.keys.map((key) =>
        issue([...path, key], "unknown key", didYouMean(key, known) ?? (known.length > 0 ? `known keys: ${known.join(", ")}` : undefined)),
      );
    }
    case "invalid_type":
      return [invalidType(path, zodIssue.expected, zodIssue.input)];
    case "invalid_value": {
      const values = zodIssue.values.map(String);
      const got = zodIssue.input;
      return [issue(path, `${describe(got)} is not one of: ${values.join(", ")}`, typeof got === "string" ? didYouMean(got, values) : undefined)];
    }
    case "invalid_union":
      return invalidUnion(zodIssue, path, schema);
    case "too_small":
      return [tooSmall(path, zodIssue)];
    case "invalid_key":
      return [issue(path, `invalid key: ${zodIssue.issues[0]?.message ?? zodIssue.message}`)];
    default:
      return [issue(path, zodIssue.message)];
  }
}

const isNumeric = (text: string) => text.trim() !== "" && !Number.isNaN(Number(text));

function invalidType(path: PathSegment[], expected: string, input: unknown): ConfigIssue {
  if (input === undefined) return issue(path, "required key is missing");
  let hint: string | undefined;
  if (expected === "array" && typeof input === "string") {
    hint = `write a list: [${input
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean)
      .join(", ")}]`;
  } else if ((expected === "number" || expected === "int") && typeof input === "string" && isNumeric(input)) {
    hint = "write the number without quotes";
  }
  return issue(path, `expected ${article(expected)}, got ${describe(input)}`, hint);
}

/**
 * A value that matched no branch of a union: if exactly one branch got past
 * the type check (an object with a bad key, say), its issues are the real
 * ones; otherwise say which types would do.
 */
function invalidUnion(zodIssue: z.core.$ZodIssueInvalidUnion, path: PathSegment[], schema: z.core.$ZodType): ConfigIssue[] {
  const typeOnly = (branch: z.core.$ZodIssue[]) => branch.every((i) => i.code === "invalid_type" && i.path.length === 0);
  const relevant = zodIssue.errors.filter((branch) => !typeOnly(branch));
  const [chosen] = relevant;
  if (chosen !== undefined) return chosen.flatMap((inner) => convert(inner, path, schema));
  const expected = zodIssue.errors.flatMap((branch) => branch.map((i) => (i.code === "invalid_type" ? i.expected : "")));
  const names = [...new Set(expected.filter(Boolean).map(article))];
  if (names.length === 0) return [issue(path, zodIssue.message)];
  return [issue(path, `expected ${names.join(" or ")}, got ${describe(zodIssue.input)}`)];
}

function tooSmall(path: PathSegment[], zodIssue: z.core.$ZodIssueTooSmall): ConfigIssue {
  const minimum = Number(zodIssue.minimum);
  if (zodIssue.origin === "array" || zodIssue.origin === "string") {
    if (minimum === 1) {
      return issue(path, "must not be empty", path.length === 1 && path[0] === "tasks" ? "add at least one task" : undefined);
    }
    return issue(path, `needs at least ${minimum} ${zodIssue.origin === "array" ? "items" : "characters"}`);
  }
  return issue(path, zodIssue.inclusive ? `must be ${minimum} or more` : `must be greater than ${minimum}`);
}

const ARTICLES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

function article(expected: string): string {
  return ARTICLES[expected] ?? expected;
}

/** A value as a person would name it in an error: `the string "abc"`, `a list`, `nothing`. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null (an empty value)";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === "number") return `the number ${value}`;
  return String(value);
}

type Def = Record<string, unknown> & { type: string };
const defOf = (schema: unknown): Def => (schema as z.core.$ZodType)._zod.def as unknown as Def;

/** The keys allowed at `path` in `schema` (an object's shape, or an enum-keyed record's keys). */
export function knownKeysAt(schema: z.core.$ZodType, path: readonly PathSegment[]): string[] {
  const def = defOf(schema);
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return knownKeysAt(def.innerType as z.core.$ZodType, path);
    case "pipe":
      return knownKeysAt(def.in as z.core.$ZodType, path);
    case "union":
      for (const option of def.options as z.core.$ZodType[]) {
        const keys = knownKeysAt(option, path);
        if (keys.length > 0) return keys;
      }
      return [];
  }
  const [head, ...rest] = path;
  if (head === undefined) {
    if (def.type === "object") return Object.keys(def.shape as object);
    if (def.type === "record" && defOf(def.keyType).type === "enum") return Object.values(defOf(def.keyType).entries as object);
    return [];
  }
  if (def.type === "object") {
    const child = (def.shape as Record<string, z.core.$ZodType>)[String(head)];
    return child === undefined ? [] : knownKeysAt(child, rest);
  }
  if (def.type === "array" && typeof head === "number") return knownKeysAt(def.element as z.core.$ZodType, rest);
  if (def.type === "record") return knownKeysAt(def.valueType as z.core.$ZodType, rest);
  return [];
}
