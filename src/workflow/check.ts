/**
 * The before-launch checks of a workflow script, in one pass over its syntax
 * tree: it parses as plain JavaScript, begins with `export const meta = {…}`
 * as a pure literal, imports nothing, and does not read the clock or
 * randomness. A script that fails one is refused before any agent starts.
 */
import type { Node, Options, Program } from "acorn";
import { WorkflowScriptError } from "./errors.ts";
import { type WorkflowMeta, WorkflowMetaSchema } from "./meta.ts";
import { SETTINGS_FREE_OPTIONS } from "./task-spec.ts";

/** A script that passed the checks: its meta, and its body as the sandbox runs it (same lines as the source). */
export interface CheckedScript {
  meta: WorkflowMeta;
  /**
   * The body as a function of the strand keeper (prelude.ts) that runs it in an async function (top-level await and
   * return), the meta statement blanked.
   */
  body: string;
  /** Some `agent()` call in the script is a plain one (no options, or only label and phase): a run may prepare its process. */
  makesPlainCalls: boolean;
}

const PARSE_OPTIONS: Options = {
  ecmaVersion: "latest",
  sourceType: "module",
  allowReturnOutsideFunction: true,
  allowAwaitOutsideFunction: true,
  locations: true,
};

const FIX_HINT = "fix the script and run it again";

type AnyNode = Node & Record<string, unknown>;

function lineOf(node: Node): number {
  return node.loc?.start.line ?? 0;
}

/** Every node below `root`, depth first. */
function* walk(root: Node): Generator<AnyNode> {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
    } else if (value !== null && typeof value === "object" && typeof (value as { type?: unknown }).type === "string") {
      const node = value as AnyNode;
      yield node;
      for (const [key, child] of Object.entries(node)) if (key !== "loc" && child !== null && typeof child === "object") stack.push(child);
    }
  }
}

function isName(node: unknown, name: string): boolean {
  return (node as AnyNode | undefined)?.type === "Identifier" && (node as { name?: string }).name === name;
}

/** `object.property` written plainly or as `object["property"]`. */
function isMember(node: AnyNode, object: string, property: string): boolean {
  if (node.type !== "MemberExpression" || !isName(node.object, object)) return false;
  const key = node.property as AnyNode;
  return node.computed ? key.type === "Literal" && key.value === property : isName(key, property);
}

/** What the script reaches for that it may not (imports, exports, the clock), in source order. */
function* forbidden(nodes: readonly AnyNode[]): Generator<WorkflowScriptError> {
  for (const node of nodes) {
    if (node.type === "ImportDeclaration" || node.type === "ImportExpression" || (node.type === "MetaProperty" && isName(node.meta, "import"))) {
      yield new WorkflowScriptError(
        `Workflow script not launched: line ${lineOf(node)} imports; workflow scripts cannot import modules; ${FIX_HINT}`,
      );
    }
    if (node.type === "ExportNamedDeclaration" || node.type === "ExportDefaultDeclaration" || node.type === "ExportAllDeclaration") {
      yield new WorkflowScriptError(
        `Workflow script not launched: line ${lineOf(node)} exports; only \`export const meta\` may, as the first statement; ${FIX_HINT}`,
      );
    }
    const clock =
      (node.type === "CallExpression" && (isMember(node.callee as AnyNode, "Date", "now") || isMember(node.callee as AnyNode, "Math", "random"))) ||
      (node.type === "NewExpression" && isName(node.callee, "Date") && (node.arguments as unknown[]).length === 0) ||
      (node.type === "CallExpression" && isName(node.callee, "Date"));
    if (clock) {
      yield new WorkflowScriptError(
        `Workflow script not launched: line ${lineOf(node)} reads the clock or randomness; Date.now(), Math.random() and new Date() are unavailable (a resumed run must replay the same calls); pass times in through args`,
      );
    }
  }
}

/** The name of a property written `name:`, `"name":` or `name`; undefined for a computed key, a spread, a getter or a setter. */
function propertyName(property: AnyNode): string | undefined {
  if (property.type !== "Property" || property.computed || property.kind !== "init") return undefined;
  const key = property.key as AnyNode;
  return key.type === "Identifier" ? (key.name as string) : key.type === "Literal" ? String(key.value) : undefined;
}

/** Whether `agent(prompt)` or `agent(prompt, { label, phase })` appears: options that may hold more (a variable, a spread) do not count. */
function makesPlainCalls(nodes: readonly AnyNode[]): boolean {
  for (const node of nodes) {
    if (node.type !== "CallExpression" || !isName(node.callee, "agent")) continue;
    const options = (node.arguments as AnyNode[])[1];
    if (options === undefined) return true;
    if (options.type !== "ObjectExpression") continue;
    if ((options.properties as AnyNode[]).every((property) => SETTINGS_FREE_OPTIONS.has(propertyName(property) ?? ""))) return true;
  }
  return false;
}

/** The value of a pure literal (objects, arrays, strings, numbers, booleans, null, plain templates); undefined if it is not one. */
function literalValue(node: AnyNode): { value: unknown } | undefined {
  switch (node.type) {
    case "Literal":
      return (node as { regex?: unknown }).regex === undefined ? { value: node.value } : undefined;
    case "TemplateLiteral": {
      const quasis = node.quasis as { value: { cooked: string } }[];
      return (node.expressions as unknown[]).length === 0 ? { value: quasis[0]?.value.cooked ?? "" } : undefined;
    }
    case "UnaryExpression": {
      const inner = literalValue(node.argument as AnyNode);
      return node.operator === "-" && typeof inner?.value === "number" ? { value: -inner.value } : undefined;
    }
    case "ArrayExpression": {
      const items: unknown[] = [];
      for (const element of node.elements as (AnyNode | null)[]) {
        const item = element === null ? undefined : literalValue(element);
        if (item === undefined) return undefined;
        items.push(item.value);
      }
      return { value: items };
    }
    case "ObjectExpression": {
      const object: Record<string, unknown> = {};
      for (const property of node.properties as AnyNode[]) {
        // A spread has no name (and no value to read): it is not a literal, as a method or a shorthand is not.
        const name = property.method || property.shorthand ? undefined : propertyName(property);
        if (name === undefined) return undefined;
        const value = literalValue(property.value as AnyNode);
        if (value === undefined) return undefined;
        object[name] = value.value;
      }
      return { value: object };
    }
    default:
      return undefined;
  }
}

/** The meta statement, checked: the first statement, `export const meta =` a pure literal of the right shape. */
function metaOf(program: Program): { meta: WorkflowMeta; statement: Node } | WorkflowScriptError {
  const first = program.body[0] as AnyNode | undefined;
  const declaration = first?.type === "ExportNamedDeclaration" ? (first.declaration as AnyNode | null) : null;
  const declarator = declaration?.type === "VariableDeclaration" && declaration.kind === "const" ? (declaration.declarations as AnyNode[]) : [];
  if (first === undefined || declarator.length !== 1 || !isName(declarator[0]!.id, "meta")) {
    return new WorkflowScriptError(`Workflow script not launched: it must begin with \`export const meta = { name, description }\`; ${FIX_HINT}`);
  }
  const init = declarator[0]!.init as AnyNode | null;
  const literal = init === null ? undefined : literalValue(init);
  if (literal === undefined) {
    return new WorkflowScriptError(
      `Workflow script not launched: \`meta\` must be a pure literal (no variables, calls, spreads or interpolation); ${FIX_HINT}`,
    );
  }
  const parsed = WorkflowMetaSchema.safeParse(literal.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `meta.${issue.path.join(".")}` : "meta";
    return new WorkflowScriptError(`Workflow script not launched: ${where}: ${issue.message}; ${FIX_HINT}`);
  }
  return { meta: parsed.data, statement: first };
}

/** The name through which the body's awaits keep their strand (prelude.ts); the body takes it as its parameter. */
const STRAND_KEEPER = "__cadre_strand__";

/**
 * The source with every `await X` as `keeper.back(await keeper(X))`: what follows an await runs in the strand (a
 * parallel() or pipeline() item, or the top level) it was awaited in, as in the CLI's runtime, where the strand follows
 * the code across its awaits (claude-code-keys.ts). Lines stay (and no line starts anew with a parenthesis); columns
 * after an await move.
 */
function keepingStrands(source: string, awaits: readonly AnyNode[]): string {
  type Edit = { at: number; text: string; closes: boolean; depth: number };
  const edits: Edit[] = awaits.flatMap((node) => [
    { at: node.start, text: `${STRAND_KEEPER}.back(`, closes: false, depth: node.start },
    { at: (node.argument as Node).start, text: `${STRAND_KEEPER}(`, closes: false, depth: node.start },
    { at: node.end, text: "))", closes: true, depth: node.start },
  ]);
  // At one place: what closes before what opens; the inner await closes first, the outer one opens first.
  edits.sort((a, b) => a.at - b.at || Number(b.closes) - Number(a.closes) || (a.closes ? b.depth - a.depth : a.depth - b.depth));
  let text = "";
  let from = 0;
  for (const edit of edits) {
    text += source.slice(from, edit.at) + edit.text;
    from = edit.at;
  }
  return text + source.slice(from);
}

/** The source with `statement` blanked (newlines kept, so that lines stay), its awaits keeping their strand, as a function of the keeper. */
function bodyOf(source: string, statement: Node, awaits: readonly AnyNode[]): string {
  const blank = source.slice(statement.start, statement.end).replace(/[^\n]/g, " ");
  const body = keepingStrands(`${source.slice(0, statement.start)}${blank}${source.slice(statement.end)}`, awaits);
  return `((${STRAND_KEEPER}) => (async () => {${body}\n})())`;
}

/** Lines that read as TypeScript: a declared type, a typed name or parameter, a cast, a non-null assertion, a modifier. */
const TYPESCRIPT_LINE = [
  /^\s*(export\s+)?(declare\s+)?(interface|type|enum|namespace|abstract\s+class)\s+[\w$]+/,
  /\b(const|let|var)\s+[\w$]+\s*!?:\s*[\w$[{(]/,
  /\bfunction\b[^(]*\([^)]*[\w$]\??\s*:\s*[\w$]/,
  /\([^()]*[\w$]\??:\s*[\w$][^()]*\)\s*(:\s*[^=]+)?=>/,
  /\)\s*:\s*(Promise<|string\b|number\b|boolean\b|void\b|any\b|unknown\b)/,
  /\bas\s+(const|string|number|boolean|any|unknown|[A-Z][\w$]*)\b/,
  /[\w$)\]]!\./,
  /\b(private|public|protected|readonly)\s+[\w$]+/,
];

/** A parse error, with a word on TypeScript only when the line it points at reads as TypeScript. */
function syntaxProblem(source: string, cause: Error & { loc?: { line: number } }): WorkflowScriptError {
  const line = cause.loc === undefined ? "" : (source.split("\n")[cause.loc.line - 1] ?? "");
  const hint = TYPESCRIPT_LINE.some((pattern) => pattern.test(line))
    ? "workflow scripts are plain JavaScript (no TypeScript annotations, interfaces or generics)"
    : FIX_HINT;
  return new WorkflowScriptError(`Invalid workflow script: ${cause.message}; ${hint}`, { cause });
}

/** What the checks found: the script as the sandbox runs it when they found nothing, else every problem, in source order. */
export type ScriptInspection = { ok: true; script: CheckedScript } | { ok: false; problems: WorkflowScriptError[] };

/** The checks, in one pass: every problem (a syntax error stops the pass; nothing else can be read then). */
export async function inspectWorkflowScript(source: string): Promise<ScriptInspection> {
  // Loaded here: only a command that runs or checks a script needs a parser.
  const { parse } = await import("acorn");
  let program: Program;
  try {
    program = parse(source, PARSE_OPTIONS);
  } catch (cause) {
    return { ok: false, problems: [syntaxProblem(source, cause as Error & { loc?: { line: number } })] };
  }
  const meta = metaOf(program);
  const problems = meta instanceof WorkflowScriptError ? [meta] : [];
  // The meta statement is checked above, whatever its literal; an `export` anywhere else is a problem of its own.
  const first = program.body[0] as AnyNode | undefined;
  const metaFirst = first?.type === "ExportNamedDeclaration" && (first.declaration as AnyNode | null)?.type === "VariableDeclaration";
  const rest = { ...program, body: metaFirst ? program.body.slice(1) : program.body } as Program;
  // In source order: the problems are listed as they come.
  const nodes = [...walk(rest)].sort((a, b) => a.start - b.start);
  problems.push(...forbidden(nodes));
  if (problems.length > 0 || meta instanceof WorkflowScriptError) return { ok: false, problems };
  const awaits = nodes.filter((node) => node.type === "AwaitExpression");
  return { ok: true, script: { meta: meta.meta, body: bodyOf(source, meta.statement, awaits), makesPlainCalls: makesPlainCalls(nodes) } };
}

/** The checks; throws a WorkflowScriptError with a one-line message for the first problem. */
export async function checkWorkflowScript(source: string): Promise<CheckedScript> {
  const inspection = await inspectWorkflowScript(source);
  if (!inspection.ok) throw inspection.problems[0]!;
  return inspection.script;
}
