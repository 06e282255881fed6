import { describe, expect, it } from "vitest";
import type { DependencyOutcome, Expression, ExpressionScope } from "../../src/swarm/expressions/index.ts";
import { loadExpressions } from "../../src/swarm/expressions/index.ts";

const { compileExpression } = await loadExpressions();
const PATH = ["tasks", 2, "when"];

function compiled(source: string): Expression {
  const result = compileExpression(source, PATH);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.expression;
}

const ok = (fields: Partial<DependencyOutcome> = {}): DependencyOutcome => ({ status: "succeeded", text: "done", ...fields });
const over = (results: Record<string, DependencyOutcome>, upstream = Object.values(results).map((r) => r.status)): ExpressionScope => ({
  results,
  upstream,
});

describe("compileExpression", () => {
  it("reports a syntax error with the expression's path and where it is", () => {
    const result = compileExpression('results.triage.structured.kind == "bug" &&', PATH);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toEqual([
      { path: "tasks[2].when", message: expect.stringMatching(/^not a valid expression: /), hint: "it ends too soon" },
    ]);
  });

  it("lists the results it reads, with what they are compared with", () => {
    const expression = compiled(
      'results.triage.structured.kind in ["bug", "crash"] && results["fix-1"].status != "failed" && results.a.structured.ok',
    );
    expect(expression.reads.map(({ task, path, comparedWith, asCondition }) => ({ task, path, comparedWith, asCondition }))).toEqual([
      { task: "triage", path: ["structured", "kind"], comparedWith: ["bug", "crash"], asCondition: false },
      { task: "fix-1", path: ["status"], comparedWith: ["failed"], asCondition: false },
      { task: "a", path: ["structured", "ok"], comparedWith: [], asCondition: true },
    ]);
    expect(expression.tasks).toEqual(["triage", "fix-1", "a"]);
    expect(expression.reads[1]?.text).toBe('results["fix-1"].status');
  });

  it("knows the variables a macro binds", () => {
    const expression = compiled('results.plan.structured.files.exists(f, f.endsWith(".ts"))');
    expect(expression.reads.map((read) => read.path)).toEqual([["structured", "files"]]);
  });

  it("refuses names other than results, unknown result fields, unknown functions and values that are not conditions", () => {
    const problems = (source: string) => {
      const result = compileExpression(source, PATH);
      return result.ok ? [] : result.issues.map((item) => `${item.message}${item.hint ? ` (${item.hint})` : ""}`);
    };
    expect(problems("result.a.text == 'x'")).toEqual(['unknown name "result" (did you mean "results"?)']);
    expect(problems("results.a.stauts == 'failed'")).toEqual(['results.a.stauts: a result has no field "stauts" (did you mean "status"?)']);
    expect(problems("results[x].text == ''")[0]).toMatch(/name the task with a fixed string/);
    expect(problems("succes()")[0]).toMatch(/no matching overload for 'succes\(\)'/);
    expect(problems("size(results.a.text)")).toEqual(["size(results.a.text): gives a int, not true or false"]);
  });
});

describe("Expression.holds", () => {
  it("reads status, text and structured output", () => {
    const expression = compiled('results.triage.structured.kind == "bug" && results.triage.text.contains("crash")');
    expect(expression.holds(over({ triage: ok({ structured: { kind: "bug" }, text: "a crash" }) }))).toBe(true);
    expect(expression.holds(over({ triage: ok({ structured: { kind: "question" }, text: "a crash" }) }))).toBe(false);
  });

  it("compares JSON numbers with integer literals", () => {
    expect(compiled("results.a.structured.n == 3").holds(over({ a: ok({ structured: { n: 3 } }) }))).toBe(true);
    expect(compiled("results.a.structured.n > 2").holds(over({ a: ok({ structured: { n: 2.5 } }) }))).toBe(true);
  });

  it("holds only when every dependency succeeded unless it calls a status function, as GitHub Actions' if:", () => {
    const failed = over({ a: ok({ status: "failed" }), b: ok() });
    expect(compiled('results.b.text == "done"').holds(failed)).toBe(false);
    expect(compiled('always() && results.b.text == "done"').holds(failed)).toBe(true);
    expect(compiled("failure()").holds(failed)).toBe(true);
    expect(compiled("failure()").holds(over({ a: ok() }))).toBe(false);
    expect(compiled("success()").holds(over({ a: ok(), b: ok() }))).toBe(true);
  });

  it("sees a failure or a cancellation further up through skipped dependencies", () => {
    const skipped = over({ b: ok({ status: "skipped" }) }, ["skipped", "failed"]);
    expect(compiled("failure()").holds(skipped)).toBe(true);
    expect(compiled("cancelled()").holds(skipped)).toBe(false);
    expect(compiled("cancelled()").holds(over({ b: ok({ status: "skipped" }) }, ["skipped", "cancelled"]))).toBe(true);
  });

  it("fails with a typed error naming the expression when a field is missing or the value is no condition", () => {
    const missing = compiled('results.a.structured.kind == "bug"');
    expect(() => missing.holds(over({ a: ok({ structured: {} }) }))).toThrow(
      expect.objectContaining({ code: "EXPRESSION_FAILED", message: 'results.a.structured.kind == "bug": No such key: kind' }),
    );
    const dynamic = compiled("results.a.structured.flag");
    expect(() => dynamic.holds(over({ a: ok({ structured: { flag: "yes" } }) }))).toThrow(
      expect.objectContaining({ code: "EXPRESSION_NOT_BOOLEAN", message: 'results.a.structured.flag: gave "yes", not true or false' }),
    );
  });
});
