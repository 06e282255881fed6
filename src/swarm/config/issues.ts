// One problem in a swarm config: its path, message and hint, and the error that lists them all.
import { z } from "zod";
import { CadreError } from "../../errors.ts";

/** One problem in a swarm config: where (`tasks[2].agent`), what, and how to fix it. */
export const ConfigIssueSchema = z.object({
  /** The key path in the config, like `tasks[2].agent`; "" for the file as a whole. */
  path: z.string(),
  message: z.string(),
  hint: z.string().optional(),
});
export type ConfigIssue = z.infer<typeof ConfigIssueSchema>;

export type PathSegment = string | number;

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** ["tasks", 2, "agent"] → "tasks[2].agent"; keys with dots or spaces are quoted: agents["a.b"]. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

export function issue(path: readonly PathSegment[], message: string, hint?: string): ConfigIssue {
  return hint === undefined ? { path: formatPath(path), message } : { path: formatPath(path), message, hint };
}

/**
 * `tasks[0].promt: unknown key (did you mean "prompt"?)`, the way `cadre validate`
 * prints an issue; an issue about the whole file is prefixed with `file` if given.
 */
export function formatIssue(item: ConfigIssue, file?: string): string {
  const where = item.path === "" ? file : item.path;
  return `${where === undefined ? "" : `${where}: `}${item.message}${item.hint === undefined ? "" : ` (${item.hint})`}`;
}

/** A swarm config that failed to load or validate, for callers that prefer throwing to checking a result. */
export class ConfigError extends CadreError {
  readonly issues: ConfigIssue[];

  constructor(issues: ConfigIssue[], file?: string) {
    const count = issues.length === 1 ? "1 problem" : `${issues.length} problems`;
    const first = issues[0] === undefined ? "" : `: ${formatIssue(issues[0])}`;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    super("CONFIG_INVALID", `${file ?? "swarm config"} has ${count}${first}${more}`);
    this.issues = issues;
  }
}

/**
 * Sorts issues into the order their places appear in the document, so the
 * list reads top to bottom like the file. An issue about a missing key sorts
 * with its parent; file-level issues come first.
 */
export function sortByDocumentOrder(issues: ConfigIssue[], data: unknown): ConfigIssue[] {
  const order = new Map<string, number>();
  const visit = (value: unknown, path: PathSegment[]) => {
    order.set(formatPath(path), order.size);
    if (Array.isArray(value)) for (const [index, item] of value.entries()) visit(item, [...path, index]);
    else if (typeof value === "object" && value !== null) for (const [key, item] of Object.entries(value)) visit(item, [...path, key]);
  };
  visit(data, []);
  const position = (path: string): number => {
    for (let prefix = path; ; prefix = prefix.slice(0, Math.max(0, Math.max(prefix.lastIndexOf("."), prefix.lastIndexOf("["))))) {
      const found = order.get(prefix);
      if (found !== undefined) return found;
      if (prefix === "") return -1;
    }
  };
  return issues
    .map((item, index) => ({ item, index, at: position(item.path) }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map(({ item }) => item);
}
