/** A workflow's `args` as Claude Code's runtime gives them to the script: a string that holds a JSON object or array is that object or array. */

/**
 * The script's `args` for the args a run was given: a string whose text is a JSON object or array (`'{"a":1}'`,
 * `' [1, 2] '`) becomes that object or array, as the CLI's Workflow tool does with a model that passes its args as
 * text; any other value, other strings included (`"42"`, `"true"`, `"null"`), is the script's as it is. The args a
 * nested `workflow()` passes are not read this way (nor are they by the CLI).
 */
export function workflowArgs(args: unknown): unknown {
  if (typeof args !== "string") return args;
  try {
    const parsed: unknown = JSON.parse(args);
    return parsed !== null && typeof parsed === "object" ? parsed : args;
  } catch {
    return args;
  }
}
