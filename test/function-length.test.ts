// Functions stay short: no function, method or arrow in src/ spans more than 80 lines, first line to last.
// A longer one is several steps that each want a name of their own.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript5";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");
const MAX_LINES = 80;

/** What a reader calls a function: its declared name (with its class), the name it is assigned to, or the call it is passed to. */
function nameOf(node: ts.SignatureDeclaration): string {
  const parent = node.parent;
  const owner = ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : "";
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  if (node.name) return owner + node.name.getText();
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name) {
    return parent.name.getText();
  }
  return ts.isCallExpression(parent) ? `(callback of ${parent.expression.getText()})` : "(anonymous)";
}

/** Each function with a body in `text` that spans more than MAX_LINES lines, as `file:line function (n lines)`. */
function overLong(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
      const first = lineOf(node.getStart(source));
      const lines = lineOf(node.getEnd()) - first + 1;
      const name = nameOf(node);
      if (lines > MAX_LINES) found.push(`${file}:${first} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function overLongInSrc(): string[] {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts"));
  if (files.length < 100) throw new Error(`only ${files.length} files under ${SRC}: is it the source folder?`);
  return files.flatMap((name) => overLong(`src/${name.split("\\").join("/")}`, readFileSync(join(SRC, name), "utf8")));
}

/** A function of `lines` lines in all: the opening line, the statements, the closing brace. */
const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  step${i}();`).join("\n");

describe("function length", () => {
  const found = overLongInSrc();

  it(`no function in src/ spans more than ${MAX_LINES} lines`, () => {
    expect(found).toEqual([]);
  });

  it("finds a long function, method and arrow and names each, but not an 80-line one (the check can fail)", () => {
    const text = [
      `function long() {\n${body(81)}\n}`,
      `function fits() {\n${body(80)}\n}`,
      `class Server {\n  #handle(): void {\n${body(81)}\n  }\n}`,
      `const route = () => {\n${body(81)}\n};`,
      `app.use(async () => {\n${body(81)}\n});`,
    ].join("\n");
    expect(overLong("a.ts", text)).toEqual([
      "a.ts:1 long (81 lines)",
      "a.ts:163 Server.#handle (81 lines)",
      "a.ts:245 route (81 lines)",
      "a.ts:326 (callback of app.use) (81 lines)",
    ]);
  });
});
