// Each default and limit lives once, in the layer that owns it (docs/ARCHITECTURE.md, "Where each default lives"):
// a second declaration of the same constant is a copy that will drift. Layers above import the owner's value
// or pass `undefined` through.
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");
/** A module-level constant named as a default or a limit: DEFAULT_…, …_MS, …_S, …_BYTES, MAX_…. */
const DECLARATION = /^(?:export )?const ((?:DEFAULT|MAX)_[A-Z0-9_]+|[A-Z0-9_]+_(?:MS|S|BYTES|CHARS)) = /gm;

async function declarations(): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const name of await readdir(SRC, { recursive: true })) {
    if (!name.endsWith(".ts")) continue;
    const text = await readFile(join(SRC, name), "utf8");
    for (const match of text.matchAll(DECLARATION)) {
      const places = found.get(match[1]!) ?? [];
      places.push(relative(SRC, join(SRC, name)));
      found.set(match[1]!, places);
    }
  }
  return found;
}

describe("defaults and limits", () => {
  it("are each declared in one file", async () => {
    const found = await declarations();
    expect(found.get("DEFAULT_CONCURRENCY")).toEqual(["orchestrator/orchestrator.ts"]);
    const twice = [...found].filter(([, places]) => places.length > 1).map(([name, places]) => `${name}: ${places.join(", ")}`);
    expect(twice).toEqual([]);
  });

  it("include no bare concurrency default of 4 outside the orchestrator", async () => {
    const offenders: string[] = [];
    for (const name of await readdir(SRC, { recursive: true })) {
      if (!name.endsWith(".ts") || name === join("orchestrator", "orchestrator.ts")) continue;
      const text = await readFile(join(SRC, name), "utf8");
      if (/concurrency[^\n]*(?:\?\?|=)\s*4\b/.test(text)) offenders.push(name);
    }
    expect(offenders).toEqual([]);
  });
});
