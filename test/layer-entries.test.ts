// A layer's index.ts lists what it offers the layers above (docs/ARCHITECTURE.md). A static import
// from another layer names that index, so a reader finds a layer's surface in one file and a
// module can move inside its layer without edits elsewhere. Dynamic imports may name a module:
// they are how heavy or optional parts (BullMQ, the MCP server, the rehearsal rig) load only when used.
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "..", "src");
const STATIC_FROM = /^(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)";/gms;

/** The layer a file belongs to (src/<layer>/…), or undefined for files directly in src/. */
function layerOf(file: string): string | undefined {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0] : undefined;
}

async function bypasses(): Promise<string[]> {
  const files = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith(".ts")).map((f) => join(SRC, f));
  const found: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (from === undefined) continue;
    for (const match of (await readFile(file, "utf8")).matchAll(STATIC_FROM)) {
      const target = resolve(dirname(file), match[1] ?? "");
      const to = layerOf(target);
      if (to === undefined || to === from || to === "util") continue;
      if (target !== join(SRC, to, "index.ts")) found.push(`${relative(SRC, file)} imports ${relative(SRC, target)}`);
    }
  }
  return found;
}

describe("layer entries", () => {
  it("a static import from another layer names that layer's index.ts", async () => {
    expect(await bypasses()).toEqual([]);
  });

  it("finds an import that bypasses an index (the check can fail)", () => {
    const text = 'import { Orchestrator } from "../orchestrator/orchestrator.ts";\nimport type { X } from "../protocol/index.ts";';
    expect([...text.matchAll(STATIC_FROM)].map((m) => m[1])).toEqual(["../orchestrator/orchestrator.ts", "../protocol/index.ts"]);
  });
});
