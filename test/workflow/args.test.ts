// workflowArgs: which string args reach a script as JSON (the CLI's rule; conformance.test.ts checks it against the CLI).
import { describe, expect, it } from "vitest";
import { workflowArgs } from "../../src/workflow/index.ts";

describe("workflowArgs", () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    [" [1, 2] ", [1, 2]],
    ['  {"x":[1]}\n', { x: [1] }],
    ["42", "42"],
    ["true", "true"],
    ["null", "null"],
    ['"q"', '"q"'],
    ["{bad", "{bad"],
    ["[1,]", "[1,]"],
    ["", ""],
  ])("reads %j as %j", (given, seen) => {
    expect(workflowArgs(given)).toEqual(seen);
  });

  it("gives any other value as it is", () => {
    const args = { nested: '{"a":1}' };
    expect(workflowArgs(args)).toBe(args);
    expect(workflowArgs(undefined)).toBeUndefined();
    expect(workflowArgs(7)).toBe(7);
  });
});
