// package.json is the one source of truth for versions: deno.json's import map must
// name the same ranges, and must map every package the Deno-run sources import.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface DenoJson {
  version: string;
  imports: Record<string, string>;
  scopes?: Record<string, Record<string, string>>;
}

const deno = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as DenoJson;
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const ranges: Record<string, string> = { ...pkg.devDependencies, ...pkg.dependencies };

/** `npm:zod@^4.6.7`, `npm:/@scope/name@^1.2.3/` → name and range. */
function parseNpm(target: string): { name: string; range: string } | undefined {
  const match = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)/.exec(target);
  return match ? { name: match[1]!, range: match[2]! } : undefined;
}

/** Every file Deno runs from this repository: src/, the Deno entry point and the Deno tests. */
function denoSources(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
    );
  return [...walk(join(ROOT, "src")), join(ROOT, "bin/cadre-deno.ts"), ...walk(join(ROOT, "test/deno")).filter((f) => !f.endsWith(".test.ts"))];
}

function bareImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  // Not the word inside a string or a name (`isName(node, "import")` in the workflow checks is no import).
  const specifiers = [...text.matchAll(/(?<!["'\w])(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]!);
  return specifiers.filter((s) => !s.startsWith(".") && !s.startsWith("/") && !s.startsWith("node:") && !s.startsWith("npm:"));
}

function isMapped(specifier: string): boolean {
  return Object.keys(deno.imports).some((key) => key === specifier || (key.endsWith("/") && specifier.startsWith(key)));
}

describe("deno.json", () => {
  const targets = [...Object.values(deno.imports), ...Object.values(deno.scopes ?? {}).flatMap((scope) => Object.values(scope))];
  const npmTargets = targets.filter((t) => t.startsWith("npm:"));

  it("publishes to JSR at package.json's version", () => {
    expect(deno.version).toBe(pkg.version);
  });

  it("maps npm packages at exactly package.json's versions", () => {
    expect(npmTargets.length).toBeGreaterThan(0);
    for (const target of npmTargets) {
      const parsed = parseNpm(target);
      expect(parsed, `${target} has no version`).toBeDefined();
      expect(ranges[parsed!.name], `${parsed!.name} (deno.json: ${target}) is not in package.json`).toBeDefined();
      expect(`${parsed!.name}@${parsed!.range}`, `deno.json and package.json disagree`).toBe(`${parsed!.name}@${ranges[parsed!.name]}`);
    }
  });

  it("maps every package that the Deno-run sources import", () => {
    const unmapped = denoSources().flatMap((file) =>
      bareImports(file)
        .filter((s) => !isMapped(s))
        .map((s) => `${relative(ROOT, file)}: ${s}`),
    );
    expect(unmapped).toEqual([]);
  });

  it("routes each MCP SDK subpath through a shim that re-exports that subpath", () => {
    // The shims exist because Deno cannot find the SDK's types for `…/x.js` subpaths (see docs/deno.md).
    const shims = Object.entries(deno.imports).filter(([key, target]) => key.startsWith("@modelcontextprotocol/sdk/") && target.startsWith("./"));
    expect(shims.length).toBeGreaterThan(0);
    for (const [key, target] of shims) {
      const text = readFileSync(join(ROOT, target), "utf8");
      expect(text, target).toContain(`export * from "${key}";`);
      expect(text, target).toContain(`// @ts-types="${key.replace(/\.js$/, "")}"`);
    }
  });
});
