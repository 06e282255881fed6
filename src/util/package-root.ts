// cadre's package root, found from a module's place: in the sources, a clone or an installed package.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function isCadreRoot(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown }).name === "cadre";
  } catch {
    return false;
  }
}

let located: string | null | undefined;

/**
 * cadre's own folder: the nearest one above this module whose package.json is cadre's. The
 * same from the sources (tsx, Deno, a clone), from dist/ (tsc's files) and from the command
 * line's bundle in dist/cli/, so files the package ships beside its code (agents/, the
 * dashboard's page) are found wherever the code runs. Undefined when cadre was not loaded
 * from files (from JSR on Deno, import.meta.url is https:).
 */
export function cadreRoot(): string | undefined {
  if (located !== undefined) return located ?? undefined;
  located = null;
  if (!import.meta.url.startsWith("file:")) return undefined;
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (isCadreRoot(dir)) {
      located = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  return located ?? undefined;
}
