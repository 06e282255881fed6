/**
 * Saved workflows, found as Claude Code finds them: `.claude/workflows/NAME.js`
 * in the project, then in the user's home; and the file a `{scriptPath}`
 * reference names.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { WorkflowScriptError } from "./errors.ts";

export interface SavedWorkflowPlaces {
  /** The project directory (default: the current one). */
  cwd?: string;
  /** The user's home (default: os.homedir()). */
  home?: string;
}

/** A script found by name or path: its text, and the name it goes by. */
export interface WorkflowSource {
  name: string;
  file: string;
  source: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Where a saved workflow of this name may be, in the order they are tried. */
export function savedWorkflowFiles(name: string, places: SavedWorkflowPlaces = {}): string[] {
  const cwd = resolve(places.cwd ?? process.cwd());
  const home = places.home ?? homedir();
  return [join(cwd, ".claude", "workflows", `${name}.js`), join(home, ".claude", "workflows", `${name}.js`)];
}

/** The saved workflow `name`; a WorkflowScriptError when there is none. */
export async function findSavedWorkflow(name: string, places: SavedWorkflowPlaces = {}): Promise<WorkflowSource> {
  if (!NAME.test(name)) throw new WorkflowScriptError(`no saved workflow "${name}": a workflow's name is letters, digits, ".", "_" and "-"`);
  const files = savedWorkflowFiles(name, places);
  for (const file of files) {
    const source = await readFile(file, "utf8").catch(() => undefined);
    if (source !== undefined) return { name, file, source };
  }
  throw new WorkflowScriptError(`no saved workflow "${name}" (looked for ${files.join(" and ")})`);
}

/** What workflow() names: a saved workflow's name, or `{scriptPath}` (relative to the project). */
export async function readWorkflowRef(ref: unknown, places: SavedWorkflowPlaces = {}): Promise<WorkflowSource> {
  if (typeof ref === "string") return findSavedWorkflow(ref, places);
  const scriptPath = (ref as { scriptPath?: unknown } | null)?.scriptPath;
  if (typeof scriptPath !== "string" || scriptPath === "") {
    throw new WorkflowScriptError('workflow() takes a saved workflow\'s name or {scriptPath: "…"}');
  }
  const file = isAbsolute(scriptPath) ? scriptPath : resolve(places.cwd ?? process.cwd(), scriptPath);
  const source = await readFile(file, "utf8").catch((cause: unknown) => {
    throw new WorkflowScriptError(`workflow(): cannot read ${file}`, { cause });
  });
  return { name: scriptPath, file, source };
}
