// Imports point down only: every import in src/ (static, type-only or dynamic) goes from a layer to one that
// test/support/layers.ts lets it import, each allowed dependency is used, and docs/ARCHITECTURE.md draws the
// same matrix. (biome.jsonc keeps noImportCycles: no circle inside a layer either.)
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { BOTTOM, LAYERS, MAY_IMPORT, mayImport } from "./support/layers.ts";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");
/** `import … from "./x"`, `export … from "./x"`, `import "./x"` and `import("./x")`. */
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

/** The layer of a path under src/ (its folder, or errors.ts); undefined for src/index.ts, the public entry, and files outside src/. */
function layerOf(path: string): string | undefined {
  const parts = relative(SRC, path).split(sep);
  if (parts[0] === "..") return undefined;
  return parts.length > 1 ? parts[0] : parts[0] === "errors.ts" ? "errors.ts" : undefined;
}

/** Each import between two layers: the file, the layer it imports and the specifier. */
function crossings(files: Record<string, string>): { file: string; from: string; to: string }[] {
  return Object.entries(files).flatMap(([file, text]) => {
    const from = layerOf(file);
    if (from === undefined) return [];
    const code = text.replace(/^\s*(?:\/\/|\*).*$/gm, "");
    return [...code.matchAll(IMPORT)].flatMap((match) => {
      const to = layerOf(resolve(dirname(file), match[1]!));
      return to === undefined || to === from ? [] : [{ file: relative(ROOT, file), from, to }];
    });
  });
}

function sources(): Record<string, string> {
  const names = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((name) => /\.(?:ts|js|mjs)$/.test(name));
  return Object.fromEntries(names.map((name) => [join(SRC, name), readFileSync(join(SRC, name), "utf8")]));
}

describe("layer boundaries", () => {
  const graph = crossings(sources());

  it("every layer of src/ is in the matrix", () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.filter((folder) => !LAYERS.includes(folder))).toEqual([]);
    expect(graph.length).toBeGreaterThan(100);
  });

  it("no import points up or sideways", () => {
    expect(graph.filter(({ from, to }) => !mayImport(from, to)).map(({ file, to }) => `${file} imports ${to}`)).toEqual([]);
  });

  it("no layer imports src/index.ts, the public entry (it imports every layer: a cycle)", () => {
    const files = sources();
    const entry = join(SRC, "index.ts");
    const importers = Object.entries(files)
      .filter(([file]) => layerOf(file) !== undefined)
      .filter(([file, text]) => [...text.matchAll(IMPORT)].some((match) => resolve(dirname(file), match[1]!) === entry));
    expect(importers.map(([file]) => relative(ROOT, file))).toEqual([]);
  });

  it("each dependency the matrix allows is one the code uses", () => {
    const used = new Set(graph.map(({ from, to }) => `${from} → ${to}`));
    const allowed = Object.entries(MAY_IMPORT).flatMap(([from, tos]) => (tos === "*" ? [] : tos.map((to) => `${from} → ${to}`)));
    expect(allowed.filter((edge) => !used.has(edge))).toEqual([]);
  });

  it("finds an upward import, a dynamic one and a type-only one (the check can fail)", () => {
    const found = crossings({
      [join(SRC, "worker", "a.ts")]: 'import type { X } from "../orchestrator/index.ts";\nconst m = await import("../swarm/index.ts");\n',
      [join(SRC, "protocol", "deep", "b.ts")]:
        'export { y } from "../../worker/index.ts";\nimport { e } from "../../errors.ts";\n// from "../cli/x.ts"\n',
    });
    expect(found.map(({ from, to }) => `${from} → ${to}`)).toEqual([
      "worker → orchestrator",
      "worker → swarm",
      "protocol → worker",
      "protocol → errors.ts",
    ]);
    expect(found.filter(({ from, to }) => !mayImport(from, to))).toHaveLength(3);
  });

  it("docs/ARCHITECTURE.md's table is the matrix", () => {
    const text = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
    const rows = [...text.matchAll(/^\| `([a-z.]+)` \| (.+) \|$/gm)].map(([, layer, list]) => {
      const names = list!
        .replace(/\([^)]*\)/g, "")
        .split(",")
        .map((name) => name.trim());
      return [layer, names[0] === "every layer" ? "*" : names[0] === "none" ? [] : names] as const;
    });
    expect(Object.fromEntries(rows)).toEqual(MAY_IMPORT);
    expect(text).toContain(`Every layer may also import ${BOTTOM.map((b) => (b === "util" ? "`src/util/`" : `\`src/${b}\``)).join(" and ")}`);
  });
});
