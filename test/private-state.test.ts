// State is #private (ECMAScript's, enforced at run time), not TypeScript's `private`, which is
// a compile-time promise only; mixing the two in one class made readers guess. A private
// constructor stays: it has no # form.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");
const TS_PRIVATE = /^\s+(?:private|protected)\s+(?!constructor\b)/gm;

describe("private state", () => {
  it("no class member in src/ is TypeScript-private", async () => {
    const files = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith(".ts"));
    const found: string[] = [];
    for (const file of files) {
      const text = await readFile(join(SRC, file), "utf8");
      for (const match of text.matchAll(TS_PRIVATE)) found.push(`${file}:${text.slice(0, match.index).split("\n").length}`);
    }
    expect(found).toEqual([]);
  });

  it("recognises a private field, a private method and a parameter property, not a private constructor", () => {
    const text = "class A {\n  private x = 1;\n  private constructor(\n    private readonly y: number,\n  ) {}\n  protected z(): void {}\n}";
    expect([...text.matchAll(TS_PRIVATE)]).toHaveLength(3);
  });
});
