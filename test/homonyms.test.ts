// One name, one meaning: two layers that declare an exported type (or value) of the same name make a reader,
// and an import's auto-completion, pick the wrong one. Each is named for its layer (ApiUsage, SwarmAgentDefinition, …).
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");
const DECLARATION = /^export (?:declare )?(?:abstract )?(?:type|interface|class|const|let|function|enum) ([A-Za-z_$][\w$]*)/gm;

describe("exported names", () => {
  it("are declared once in src/", async () => {
    const places = new Map<string, string[]>();
    for (const name of await readdir(SRC, { recursive: true })) {
      if (!name.endsWith(".ts")) continue;
      for (const match of (await readFile(join(SRC, name), "utf8")).matchAll(DECLARATION)) {
        places.set(match[1]!, [...(places.get(match[1]!) ?? []), name]);
      }
    }
    const homonyms = [...places].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(", ")}`);
    expect(homonyms).toEqual([]);
  });
});
