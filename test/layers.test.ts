// The layer rules in biome.jsonc do what docs/ARCHITECTURE.md draws: probe files in every layer import every
// other layer, Biome lints them with the project's own configuration, and exactly the upward
// imports must be reported. A rule that stopped matching (a renamed option, a pattern that no
// longer fits) fails here instead of passing every lint silently.
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { execa } from "execa";
import { describe, expect } from "vitest";
import { it } from "./support/fixtures.ts";

const ROOT = resolve(import.meta.dirname, "..");
const BIOME = join(ROOT, "node_modules", ".bin", "biome");

const LAYERS = [
  "errors.ts",
  "util",
  "protocol",
  "rehearsal",
  "worker",
  "orchestrator",
  "swarm",
  "workflow",
  "distributed",
  "run",
  "mcp",
  "dashboard",
  "telemetry",
  "cli",
] as const;
type Layer = (typeof LAYERS)[number];

/**
 * What each layer may import besides itself (docs/ARCHITECTURE.md):
 * cli → mcp | dashboard | telemetry → run → swarm | distributed → orchestrator → worker → protocol,
 * and dashboard → run (the run's read-model),
 * each layer no more than its code uses.
 */
const MAY_IMPORT: Record<Layer, Layer[]> = {
  "errors.ts": ["util"],
  util: ["errors.ts"],
  protocol: ["errors.ts", "util"],
  rehearsal: ["protocol", "errors.ts", "util"],
  worker: ["protocol", "errors.ts", "util"],
  orchestrator: ["worker", "protocol", "errors.ts", "util"],
  swarm: ["orchestrator", "worker", "protocol", "rehearsal", "errors.ts", "util"],
  workflow: ["orchestrator", "worker", "protocol", "rehearsal", "errors.ts", "util"],
  distributed: ["orchestrator", "worker", "protocol", "rehearsal", "errors.ts", "util"],
  run: ["swarm", "workflow", "distributed", "orchestrator", "rehearsal", "errors.ts", "util"],
  mcp: ["workflow", "orchestrator", "worker", "protocol", "rehearsal", "errors.ts", "util"],
  dashboard: ["run", "swarm", "workflow", "orchestrator", "worker", "protocol", "errors.ts", "util"],
  telemetry: ["run", "swarm", "workflow", "distributed", "orchestrator", "protocol", "errors.ts", "util"],
  cli: [...LAYERS],
};

interface Diagnostic {
  category: string;
  location: { path: string | { file: string }; start: { line: number } };
}

/** Writes `files` (path → text) under `dir` beside a copy of biome.jsonc; returns Biome's diagnostics. */
async function lint(dir: string, files: Record<string, string>): Promise<Diagnostic[]> {
  await copyFile(join(ROOT, "biome.jsonc"), join(dir, "biome.jsonc"));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const run = await execa(BIOME, ["lint", "--vcs-enabled=false", "--reporter=json", "--max-diagnostics=none", "."], { cwd: dir, reject: false });
  return (JSON.parse(run.stdout) as { diagnostics: Diagnostic[] }).diagnostics;
}

const pathOf = (diagnostic: Diagnostic) => (typeof diagnostic.location.path === "string" ? diagnostic.location.path : diagnostic.location.path.file);

/** A line of `probe` that imports layer `to` (its leaf.ts, or src/errors.ts) and exports it again as `as`. */
function reExport(probe: string, to: Layer, as: string): string {
  const up = "../".repeat(probe.split("/").length - 2) || "./";
  return to === "errors.ts" ? `export { probe as ${as} } from "${up}errors.ts";\n` : `export { leaf as ${as} } from "${up}${to}/leaf.ts";\n`;
}

/** The file a layer's code lives in, `depth` folders below the layer's own. */
function fileIn(layer: Layer, depth: number, name: string): string {
  return layer === "errors.ts" ? "src/errors.ts" : ["src", layer, ...Array<string>(depth).fill("inner"), name].join("/");
}

describe("layer boundaries (biome.jsonc)", () => {
  it("reject exactly the imports that point up, from any depth of a layer", async ({ tmp }) => {
    const files: Record<string, string> = {};
    /** For each probe file, the layer each of its lines imports. */
    const importedOnLine = new Map<string, Layer[]>();
    for (const layer of LAYERS.filter((l) => l !== "errors.ts")) files[fileIn(layer, 0, "leaf.ts")] = "export const leaf = 1;\n";
    for (const from of LAYERS) {
      for (const depth of from === "errors.ts" ? [0] : [0, 2]) {
        const probe = fileIn(from, depth, "probe.ts");
        const targets = LAYERS.filter((to) => to !== from);
        files[probe] = targets.map((to, i) => reExport(probe, to, `from${i}`)).join("");
        if (from === "errors.ts") files[probe] += "export const probe = 1;\n";
        importedOnLine.set(probe, targets);
      }
    }

    const reported = (await lint(tmp, files))
      .filter((d) => d.category === "lint/style/noRestrictedImports")
      .map((d) => `${pathOf(d)} → ${importedOnLine.get(pathOf(d))?.[d.location.start.line - 1]}`);
    const upward = [...importedOnLine].flatMap(([probe, targets]) =>
      targets.filter((to) => !MAY_IMPORT[layerOf(probe)].includes(to)).map((to) => `${probe} → ${to}`),
    );
    expect(upward.length).toBeGreaterThan(50);
    expect(reported.sort()).toEqual(upward.sort());
  });

  it("reject a layer that imports the public entry src/index.ts, as an import cycle", async ({ tmp }) => {
    const diagnostics = await lint(tmp, {
      "src/index.ts": 'export * from "./worker/worker.ts";\n',
      "src/worker/worker.ts": 'import { Orchestrator } from "../index.ts";\nexport const worker = 1;\nexport type Uses = Orchestrator;\n',
    });
    expect(diagnostics.filter((d) => d.category === "lint/suspicious/noImportCycles").map(pathOf)).toContain("src/worker/worker.ts");
  });
});

function layerOf(path: string): Layer {
  return (path === "src/errors.ts" ? "errors.ts" : path.split("/")[1]) as Layer;
}
