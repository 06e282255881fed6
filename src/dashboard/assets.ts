// The dashboard page's files (HTML, CSS, ES modules), found from cadre's package root and served as they are.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { cadreRoot } from "../util/package-root.ts";
import { DashboardError } from "./errors.ts";

/**
 * The page's files: plain HTML, CSS and ES modules in src/dashboard/page/,
 * served as they are (no build step of their own). They are found from
 * cadre's package root, the nearest folder above this module whose
 * package.json is cadre's: in the sources (tsx, Deno, a clone), or where the
 * build copies them beside the command line's bundle, dist/cli/page/ (the
 * package ships dist/, not src/; see rolldown.config.ts).
 */

const PAGE_DIRS = [
  ["src", "dashboard", "page"],
  ["dist", "cli", "page"],
];
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};
/** Asset names: flat, lower-case files of the types above (no path can climb out of the folder). */
const ASSET_NAME = /^[a-z0-9-]+\.(html|js|css|svg)$/;

let located: string | undefined;

/** The folder of the page's files. */
export function pageDir(): string {
  if (located !== undefined) return located;
  const root = cadreRoot();
  located = root === undefined ? undefined : PAGE_DIRS.map((parts) => join(root, ...parts)).find((page) => existsSync(join(page, "index.html")));
  if (located !== undefined) return located;
  throw new DashboardError(
    "DASHBOARD_FILES_MISSING",
    "the dashboard's page files are missing from cadre's package (dist/cli/page/; npm run build copies them)",
  );
}

/** One of the page's files, or undefined for a name that is not one. */
export async function readAsset(name: string): Promise<{ body: Buffer; type: string } | undefined> {
  if (!ASSET_NAME.test(name)) return undefined;
  const body = await readFile(join(pageDir(), name)).catch(() => undefined);
  return body && { body, type: TYPES[extname(name)]! };
}
