/**
 * Expressions (CEL) over the results of tasks that have ended. The evaluator
 * is loaded on first use: only configs that hold an expression need it.
 */
export type {
  CompileResult,
  DependencyOutcome,
  Expression,
  ExpressionScope,
  Literal,
  OutcomeField,
  ResultRead,
  StatusFunction,
} from "./expression.ts";

export type Expressions = typeof import("./expression.ts");

let loading: Promise<Expressions> | undefined;

/** The expression compiler (compileExpression, OUTCOME_FIELDS, STATUS_FUNCTIONS), loaded once. */
export function loadExpressions(): Promise<Expressions> {
  loading ??= import("./expression.ts");
  return loading;
}
