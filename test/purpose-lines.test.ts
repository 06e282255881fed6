// Every source file opens with a comment saying what it is for: a reader knows a file before reading its imports.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

/** Whether `text` opens (after a shebang, if any) with a `//` or `/*` comment that has words in it. */
function opensWithPurpose(text: string): boolean {
  const lines = text.split("\n");
  const first = (lines[0]?.startsWith("#!") ? lines[1] : lines[0]) ?? "";
  const second = (lines[0]?.startsWith("#!") ? lines[2] : lines[1]) ?? "";
  if (/^\/\/\s*\S/.test(first)) return true;
  // A block comment: its words on the opening line (/** What it is for.) or on the next (/**\n * What it is for.).
  return /^\/\*\*?\s*\S/.test(first) || (/^\/\*\*?\s*$/.test(first) && /^\s*\*\s*\S/.test(second));
}

describe("source files", () => {
  it("each open with a comment saying what the file is for", () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((name) => /\.(?:ts|js|mjs)$/.test(name));
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((name) => !opensWithPurpose(readFileSync(join(SRC, name), "utf8")))).toEqual([]);
  });

  it("tell an import from a purpose line (the check can fail)", () => {
    expect(opensWithPurpose('import { z } from "zod";\n')).toBe(false);
    expect(opensWithPurpose("\n// late\n")).toBe(false);
    expect(opensWithPurpose("//\nimport x;\n")).toBe(false);
    expect(opensWithPurpose("// The worker's control channel.\nimport x;\n")).toBe(true);
    expect(opensWithPurpose("#!/usr/bin/env node\n// The command line.\n")).toBe(true);
    expect(opensWithPurpose("/**\n * The swarm config as written.\n */\n")).toBe(true);
  });
});
