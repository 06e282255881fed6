// ${NAME} and ${NAME:-default} in a swarm file's strings, read from the environment.

import { own } from "../../util/own.ts";
import { type ConfigIssue, issue, type PathSegment } from "./issues.ts";

export type Env = Record<string, string | undefined>;

export interface Interpolated {
  value: unknown;
  issues: ConfigIssue[];
  /**
   * Paths of strings that were one whole ${…} reference (`concurrency: ${N}`).
   * Only these may become numbers or booleans when the schema wants one.
   */
  whole: Set<string>;
}

// `$${` is an escape for a literal `${`; otherwise ${NAME} or ${NAME:-default}.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;
const WHOLE = /^\$\{[^}]*\}$/;

/**
 * Replaces ${VAR} and ${VAR:-default} in every string value (keys are left
 * alone). An unset variable without a default is an issue at the value's path;
 * `:-` also applies to a variable set to the empty string, as in the shell.
 */
export function interpolateEnv(root: unknown, env: Env): Interpolated {
  const issues: ConfigIssue[] = [];
  const whole = new Set<string>();

  const visit = (value: unknown, path: PathSegment[]): unknown => {
    if (typeof value === "string") {
      if (WHOLE.test(value)) whole.add(JSON.stringify(path));
      return value.replace(REFERENCE, (match, body: string | undefined) => {
        if (body === undefined) return "${";
        const parsed = NAME.exec(body.trim());
        if (!parsed) {
          issues.push(issue(path, `"${match}" is not a variable reference`, "write ${NAME} or ${NAME:-default}; $${ gives a literal ${"));
          return match;
        }
        const [, name = "", fallback] = parsed;
        const current = own(env, name);
        if (current !== undefined && (current !== "" || fallback === undefined)) return current;
        if (fallback !== undefined) return fallback;
        issues.push(issue(path, `environment variable ${name} is not set`, `set it, or give a default: \${${name}:-value}`));
        return match;
      });
    }
    if (Array.isArray(value)) return value.map((item, index) => visit(item, [...path, index]));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, visit(item, [...path, key])]));
    }
    return value;
  };

  return { value: visit(root, []), issues, whole };
}

/**
 * `concurrency: ${N}` reads as a string; where the schema wants a number or a
 * boolean and the string came from one whole reference, convert it. Returns
 * whether anything changed (so the caller validates again).
 */
export function coerceWholeReferences(root: unknown, whole: Set<string>, wanted: { path: PathSegment[]; expected: string }[]): boolean {
  let changed = false;
  for (const { path, expected } of wanted) {
    if (!whole.has(JSON.stringify(path)) || path.length === 0) continue;
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<PathSegment, unknown>)?.[key], root);
    const key = path[path.length - 1] as PathSegment;
    if (typeof parent !== "object" || parent === null) continue;
    const text = (parent as Record<PathSegment, unknown>)[key];
    if (typeof text !== "string") continue;
    let converted: unknown;
    if ((expected === "number" || expected === "int") && text.trim() !== "" && !Number.isNaN(Number(text))) converted = Number(text);
    else if (expected === "boolean" && (text === "true" || text === "false")) converted = text === "true";
    if (converted !== undefined) {
      (parent as Record<PathSegment, unknown>)[key] = converted;
      changed = true;
    }
  }
  return changed;
}
