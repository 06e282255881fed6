/**
 * Expressions in a swarm config (`when:`, a loop's `until:`): CEL, the
 * Common Expression Language, which reads data and calls a fixed set of pure
 * functions; it cannot run code, loop forever or reach anything the context
 * does not hold. An expression reads the results of tasks that have ended:
 * `results.<task>.status`, `.text`, `.structured…`, `.branch`, `.commit`, and
 * the status functions of GitHub Actions: success(), failure(), always(), cancelled().
 */
import { type ASTNode, Environment, type ParseResult } from "@marcbachmann/cel-js";
import { CadreError } from "../../errors.ts";
import type { TaskStatus } from "../../orchestrator/index.ts";
import { didYouMean } from "../../util/did-you-mean.ts";
import { type ConfigIssue, issue, type PathSegment } from "../config/issues.ts";

/** What an expression may read of a task that has ended. */
export interface DependencyOutcome {
  status: TaskStatus;
  text: string;
  /** Its structured output, with an output schema. */
  structured?: unknown;
  /** With a worktree: the branch of its work (or the commit it started from, if it changed nothing) and its commit. */
  branch?: string;
  commit?: string;
}

/** What an expression is evaluated over. */
export interface ExpressionScope {
  /** Each task the expression may read (its task's dependencies), by name. */
  results: Readonly<Record<string, DependencyOutcome>>;
  /** The status of every task its task depends on, directly or through others: failure() and cancelled() look there. */
  upstream: readonly TaskStatus[];
}

/** The fields of `results.<task>`. */
export const OUTCOME_FIELDS = ["status", "text", "structured", "branch", "commit"] as const;
export type OutcomeField = (typeof OUTCOME_FIELDS)[number];

/** GitHub Actions' status functions. An expression that calls none of them holds only when success() does. */
export const STATUS_FUNCTIONS = ["success", "failure", "always", "cancelled"] as const;
export type StatusFunction = (typeof STATUS_FUNCTIONS)[number];

/** A literal the read is compared with (`== "bug"`, `in ["a", "b"]`), for checking against an output schema. */
export type Literal = string | number | boolean | null;

/** One `results.<task>.<field>…` in an expression. */
export interface ResultRead {
  task: string;
  /** The field path after the task: ["structured", "kind"]; [] for the whole result. */
  path: string[];
  /** As written in the expression, e.g. `results.triage.structured.kind`. */
  text: string;
  /** Literals it is compared with (==, !=, <, <=, >, >=, in). */
  comparedWith: Literal[];
  /** True when it stands where a condition (true or false) must. */
  asCondition: boolean;
}

/** Status functions read this while an evaluation runs (CEL's function handlers see only their arguments; evaluation is synchronous). */
let current: ExpressionScope | undefined;
const scope = (): ExpressionScope => {
  if (current === undefined) throw new Error("a status function was called outside an evaluation");
  return current;
};

const allSucceeded = (over: ExpressionScope) => Object.values(over.results).every((result) => result.status === "succeeded");

const STATUS_HANDLERS: Record<StatusFunction, () => boolean> = {
  success: () => allSucceeded(scope()),
  failure: () => scope().upstream.includes("failed"),
  always: () => true,
  cancelled: () => scope().upstream.includes("cancelled"),
};

const environment = STATUS_FUNCTIONS.reduce(
  (env, name) => env.registerFunction(`${name}(): bool`, STATUS_HANDLERS[name]),
  // Limits keep a pathological expression from costing more than the config it sits in.
  new Environment({ limits: { maxAstNodes: 1000, maxDepth: 40, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 16 } }).registerVariable(
    "results",
    "map",
  ),
);

const COMPARISONS = new Set(["==", "!=", "<", "<=", ">", ">=", "in"]);
const CONDITIONS = new Set(["&&", "||", "!_"]);
/** CEL's macros that bind a variable: `list.exists(x, x > 1)`. */
const BINDING_MACROS = new Set(["all", "exists", "exists_one", "map", "filter"]);

function firstLine(error: unknown): string {
  return String((error as Error).message ?? error).split("\n")[0] ?? "";
}

function literalOf(node: ASTNode): Literal[] | undefined {
  if (node.op === "value") {
    const value = node.args;
    if (typeof value === "bigint") return [Number(value)];
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean" || value === null ? [value] : undefined;
  }
  if (node.op === "list") {
    const values = node.args.map(literalOf);
    return values.every((value) => value !== undefined) ? values.flat() : undefined;
  }
  return undefined;
}

/** Walks the parsed expression: what it reads, which status functions it calls, and what it reads that it may not. */
function inspect(root: ASTNode, path: readonly PathSegment[]) {
  const reads: ResultRead[] = [];
  const called = new Set<StatusFunction>();
  const issues: ConfigIssue[] = [];
  const problem = (message: string, hint?: string) => issues.push(issue(path, message, hint));

  /** `results.x.a.b` → the read, when the node is a chain of fixed selections on `results`. */
  const readAt = (node: ASTNode): { keys: string[]; dynamic: boolean } | undefined => {
    if (node.op === "id") return node.args === "results" ? { keys: [], dynamic: false } : undefined;
    if (node.op === "." || node.op === ".?") {
      const inner = readAt(node.args[0]);
      return inner && { keys: [...inner.keys, node.args[1]], dynamic: inner.dynamic };
    }
    if (node.op === "[]" || node.op === "[?]") {
      const inner = readAt(node.args[0]);
      const key = node.args[1];
      if (inner === undefined) return undefined;
      return key.op === "value" && typeof key.args === "string"
        ? { keys: [...inner.keys, key.args], dynamic: inner.dynamic }
        : { ...inner, dynamic: true };
    }
    return undefined;
  };

  const visit = (node: ASTNode, bound: ReadonlySet<string>, context: { compared?: Literal[]; condition?: boolean }) => {
    const read = readAt(node);
    if (read !== undefined && !(node.op === "id" && bound.has("results"))) {
      const text = node.input.slice(node.range.start, node.range.end);
      const [task, ...keys] = read.keys;
      if (read.dynamic && (task === undefined || keys.length === 0)) problem(`${text}: name the task with a fixed string, like results["fix-1"]`);
      else if (task === undefined) problem("reads results as a whole", 'name the task: results.<task> or results["<task>"]');
      else if (keys[0] !== undefined && !(OUTCOME_FIELDS as readonly string[]).includes(keys[0])) {
        problem(`${text}: a result has no field "${keys[0]}"`, didYouMean(keys[0], OUTCOME_FIELDS) ?? `its fields are ${OUTCOME_FIELDS.join(", ")}`);
      } else reads.push({ task, path: keys, text, comparedWith: context.compared ?? [], asCondition: context.condition ?? false });
      // A dynamic index past the task (results.x.structured[k]) still reads x: check the index expression too.
      if (read.dynamic) for (const child of childrenOf(node)) visit(child, bound, {});
      return;
    }
    switch (node.op) {
      case "id":
        if (!bound.has(node.args))
          problem(`unknown name "${node.args}"`, didYouMean(node.args, ["results"]) ?? "an expression reads results.<task>…");
        return;
      case "call":
        if ((STATUS_FUNCTIONS as readonly string[]).includes(node.args[0])) called.add(node.args[0] as StatusFunction);
        for (const arg of node.args[1]) visit(arg, bound, {});
        return;
      case "rcall": {
        const [name, receiver, args] = node.args;
        visit(receiver, bound, {});
        const variable = BINDING_MACROS.has(name) && args[0]?.op === "id" ? args[0].args : undefined;
        const inner = variable === undefined ? bound : new Set([...bound, variable]);
        for (const arg of variable === undefined ? args : args.slice(1)) visit(arg, inner, {});
        return;
      }
      case "?:":
        visit(node.args[0], bound, { condition: true });
        visit(node.args[1], bound, {});
        visit(node.args[2], bound, {});
        return;
      default:
        if (COMPARISONS.has(node.op)) {
          const [left, right] = node.args as [ASTNode, ASTNode];
          visit(left, bound, { compared: literalOf(right) ?? [] });
          visit(right, bound, node.op === "in" ? {} : { compared: literalOf(left) ?? [] });
          return;
        }
        for (const child of childrenOf(node)) visit(child, bound, { condition: CONDITIONS.has(node.op) });
    }
  };
  visit(root, new Set(), { condition: true });
  return { reads, called, issues };
}

function childrenOf(node: ASTNode): ASTNode[] {
  if (node.op === "value" || node.op === "id") return [];
  if (node.op === "call") return node.args[1];
  if (node.op === "rcall") return [node.args[1], ...node.args[2]];
  if (node.op === "map") return node.args.flat();
  if (node.op === "." || node.op === ".?") return [node.args[0]];
  if (node.op === "!_" || node.op === "-_") return [node.args];
  return node.args as ASTNode[];
}

/** A compiled expression: parsed once, evaluated over each scope it is asked about. */
export class Expression {
  readonly source: string;
  /** Every `results.<task>…` it reads, in order. */
  readonly reads: readonly ResultRead[];
  /** The status functions it calls; with none, it holds only when success() does too. */
  readonly statusFunctions: ReadonlySet<StatusFunction>;
  readonly #parsed: ParseResult;

  constructor(source: string, parsed: ParseResult, reads: ResultRead[], statusFunctions: Set<StatusFunction>) {
    this.source = source;
    this.#parsed = parsed;
    this.reads = reads;
    this.statusFunctions = statusFunctions;
  }

  /** The names of the tasks it reads, without repeats. */
  get tasks(): string[] {
    return [...new Set(this.reads.map((read) => read.task))];
  }

  /** Its value over `scope`; throws EXPRESSION_FAILED when it cannot be had (a missing field, a type mismatch). */
  evaluate(over: ExpressionScope): unknown {
    current = over;
    try {
      return this.#parsed({ results: over.results });
    } catch (error) {
      throw new CadreError("EXPRESSION_FAILED", `${this.source}: ${firstLine(error)}`, { cause: error });
    } finally {
      current = undefined;
    }
  }

  /**
   * Whether it holds over `scope`, as a condition: with no status function
   * called, success() must hold first (and the rest is not evaluated when it
   * does not), as in GitHub Actions. Throws EXPRESSION_FAILED, or
   * EXPRESSION_NOT_BOOLEAN when the value is not true or false.
   */
  holds(over: ExpressionScope): boolean {
    if (this.statusFunctions.size === 0 && !allSucceeded(over)) return false;
    const value = this.evaluate(over);
    if (typeof value !== "boolean") {
      throw new CadreError(
        "EXPRESSION_NOT_BOOLEAN",
        `${this.source}: gave ${typeof value === "string" ? JSON.stringify(value) : String(value)}, not true or false`,
      );
    }
    return value;
  }
}

export type CompileResult = { ok: true; expression: Expression } | { ok: false; issues: ConfigIssue[] };

/**
 * Parses and checks an expression: its syntax, the names it reads (only
 * `results.<task>.<field>…`), the functions it calls and, when it must be a
 * condition, that it can give true or false. Problems carry `path`, the
 * expression's place in the config.
 */
export function compileExpression(source: string, path: readonly PathSegment[]): CompileResult {
  let parsed: ParseResult;
  try {
    parsed = environment.parse(source);
  } catch (error) {
    return { ok: false, issues: [issue(path, `not a valid expression: ${firstLine(error)}`, locate(source, error))] };
  }
  const { reads, called, issues } = inspect(parsed.ast, path);
  if (issues.length === 0) {
    const checked = parsed.check();
    if (!checked.valid) issues.push(issue(path, `${source}: ${firstLine(checked.error)}`));
    else if (checked.type !== "bool" && checked.type !== "dyn") issues.push(issue(path, `${source}: gives a ${checked.type}, not true or false`));
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, expression: new Expression(source, parsed, reads, called) };
}

/** "at column 18" for a syntax error that knows where it is. */
function locate(source: string, error: unknown): string | undefined {
  const start = (error as { range?: { start: number } }).range?.start;
  if (start === undefined) return undefined;
  return start >= source.length ? "it ends too soon" : `at column ${start + 1}: ${source.slice(start, start + 20)}`;
}
