// Parsing YAML (and JSON) written by people: alias bombs and deep nesting refused, problems with their paths.
import { type Document, LineCounter, parseDocument, visit, type YAMLError } from "yaml";

/**
 * Alias expansions a document may make (the `yaml` package's `maxAliasCount`):
 * plenty for hand-written anchors, far too few for an alias bomb.
 */
const MAX_ALIAS_COUNT = 100;

/** Deeper than any config or script a person writes; a walk this deep still fits the stack. */
export const MAX_DEPTH = 64;

export type DataPath = (string | number)[];

/** What makes parsed data unfit to walk: where, and why. */
export interface DataProblem {
  path: DataPath;
  message: string;
}

/** A problem of a YAML text, with its place when the parser knows it. */
export interface YamlProblem {
  message: string;
  line?: number;
  column?: number;
  /** Where in the data, for a problem found after parsing (a cycle, nesting too deep). */
  path?: DataPath;
}

export type YamlRead = { ok: true; value: unknown } | { ok: false; problems: YamlProblem[] };

/**
 * Finds what would make a recursive walk of parsed data loop or overflow: a
 * cycle (a YAML alias inside the list or mapping it names) or nesting deeper
 * than MAX_DEPTH. JSON has no cycles, but can nest as deep as its text is long.
 */
export function dataProblem(data: unknown): DataProblem | undefined {
  const open = new Set<object>();
  const visit = (value: unknown, path: DataPath): DataProblem | undefined => {
    if (typeof value !== "object" || value === null) return undefined;
    if (open.has(value)) return { path, message: "a YAML alias refers to a list or mapping that contains it (the data contains itself)" };
    // Said at the top-level key: the full path would be MAX_DEPTH segments long.
    if (path.length >= MAX_DEPTH) return { path: path.slice(0, 1), message: `nested more than ${MAX_DEPTH} levels deep` };
    open.add(value);
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
    for (const [key, item] of entries) {
      const found = visit(item, [...path, key]);
      if (found) return found;
    }
    open.delete(value);
    return undefined;
  };
  return visit(data, []);
}

/**
 * Parses YAML (or JSON, which is YAML) without ever throwing: syntax errors
 * with their line and column, an alias bomb refused after MAX_ALIAS_COUNT
 * expansions, and data that contains itself or nests too deep refused before
 * anyone walks it.
 */
export function readYaml(text: string): YamlRead {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => {
        const unclosed = unclosedQuoteStart(document, error);
        const { line, col } = lineCounter.linePos(unclosed ?? error.pos[0]);
        return { line, column: col, message: unclosed === undefined ? firstLine(error.message) : `this quote is never closed` };
      }),
    };
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The package says "Excessive alias count indicates a resource exhaustion attack".
    const aliases = error instanceof ReferenceError && /alias/i.test(error.message);
    const message = aliases
      ? `too many aliases: expanding them would make more than ${MAX_ALIAS_COUNT} copies (an alias bomb?)`
      : firstLine((error as Error).message);
    return { ok: false, problems: [{ message }] };
  }
  const problem = dataProblem(value);
  return problem ? { ok: false, problems: [problem] } : { ok: true, value };
}

/** readYaml for callers that want a value or one line to show. */
export function parseYamlOrThrow(text: string): unknown {
  const read = readYaml(text);
  if (read.ok) return read.value;
  throw new Error(read.problems.map(describeYamlProblem).join("; "));
}

export function describeYamlProblem(problem: YamlProblem): string {
  if (problem.line !== undefined) return `line ${problem.line}, column ${problem.column}: ${problem.message}`;
  if (problem.path !== undefined && problem.path.length > 0) return `at ${problem.path.join(".")}: ${problem.message}`;
  return problem.message;
}

/**
 * Where a quoted string the parser found unclosed opens. The parser reports it where the text
 * ends, which can be many lines below the quote a person has to fix.
 */
function unclosedQuoteStart(document: Document, error: YAMLError): number | undefined {
  if (error.code !== "MISSING_CHAR" || !/closing ["']quote/.test(error.message)) return undefined;
  let start: number | undefined;
  visit(document, {
    Scalar(_key, node) {
      const quoted = node.type === "QUOTE_DOUBLE" || node.type === "QUOTE_SINGLE";
      if (quoted && node.range !== undefined && node.range !== null && node.range[0] < error.pos[0] && node.range[1] >= error.pos[0])
        start = node.range[0];
    },
  });
  return start;
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}
