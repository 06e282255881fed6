/**
 * Saved workflows, found as Claude Code finds them: `.claude/workflows/NAME.js`
 * in the project, then in the user's home; and the file a `{scriptPath}`
 * reference names, which must be in the project or the user's workflow folder.
 * Each is read as the CLI reads one: a regular file of at most MAX_SCRIPT_BYTES,
 * opened without waiting (a FIFO never hangs the run).
 */
import { realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import process from "node:process";
import { readRegularFile, type UnfitFileError } from "../util/regular-file.ts";
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

/** The largest script file workflow() reads (the CLI's limit). */
export const MAX_SCRIPT_BYTES = 512 * 1024;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Where a saved workflow of this name may be, in the order they are tried. */
export function savedWorkflowFiles(name: string, places: SavedWorkflowPlaces = {}): string[] {
  return workflowFolders(places).map((folder) => join(folder, `${name}.js`));
}

function workflowFolders(places: SavedWorkflowPlaces): [string, string] {
  const cwd = resolve(places.cwd ?? process.cwd());
  return [join(cwd, ".claude", "workflows"), join(places.home ?? homedir(), ".claude", "workflows")];
}

/** A script file's text, if it is a regular file of at most MAX_SCRIPT_BYTES; undefined when there is no such file. */
async function readScriptFile(file: string, shown: string): Promise<string | undefined> {
  try {
    return await readRegularFile(file, MAX_SCRIPT_BYTES);
  } catch (cause) {
    const { code, reason } = cause as { code?: string; reason?: UnfitFileError["reason"] };
    if (code === "ENOENT") return undefined;
    if (reason === "not_regular") throw new WorkflowScriptError(`Workflow script file ${shown} is not a regular file`, { cause });
    if (reason === "too_large") throw new WorkflowScriptError(`Workflow script file ${shown} exceeds ${MAX_SCRIPT_BYTES} bytes`, { cause });
    throw new WorkflowScriptError(`Failed to read workflow script file ${shown} (${code ?? (cause as Error).message})`, { cause });
  }
}

/** The saved workflow `name`; a WorkflowScriptError when there is none. */
export async function findSavedWorkflow(name: string, places: SavedWorkflowPlaces = {}): Promise<WorkflowSource> {
  if (!NAME.test(name)) throw new WorkflowScriptError(`no saved workflow "${name}": a workflow's name is letters, digits, ".", "_" and "-"`);
  const files = savedWorkflowFiles(name, places);
  for (const file of files) {
    const source = await readScriptFile(file, file);
    if (source !== undefined) return { name, file, source };
  }
  throw new WorkflowScriptError(`no saved workflow "${name}" (looked for ${files.join(" and ")})`);
}

/** Whether `path` is inside `folder` (both absolute). */
function within(path: string, folder: string): boolean {
  const rest = relative(folder, path);
  return rest !== "" && rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest);
}

/** Where `file` is, its links followed, if it is inside one of `folders` (theirs followed too); undefined if it is not. */
async function realPlaceIn(file: string, folders: readonly string[]): Promise<string | undefined> {
  const real = await realpath(file);
  for (const folder of folders) {
    const root = await realpath(folder).catch(() => undefined);
    if (root !== undefined && within(real, root)) return real;
  }
  return undefined;
}

/**
 * What workflow() names: a saved workflow's name, or `{scriptPath}` (relative to the project), which must be a file
 * in the project or the user's workflow folder, links followed: the CLI too refuses a path outside what its session may read.
 */
export async function readWorkflowRef(ref: unknown, places: SavedWorkflowPlaces = {}): Promise<WorkflowSource> {
  if (typeof ref === "string") return findSavedWorkflow(ref, places);
  const scriptPath = (ref as { scriptPath?: unknown } | null)?.scriptPath;
  if (typeof scriptPath !== "string" || scriptPath === "") {
    throw new WorkflowScriptError('workflow() takes a saved workflow\'s name or {scriptPath: "…"}');
  }
  const project = resolve(places.cwd ?? process.cwd());
  const folders = [project, workflowFolders(places)[1]];
  const outside = new WorkflowScriptError(
    `workflow(): scriptPath must be a file in the project (${folders[0]}) or in ${folders[1]}, as Claude Code refuses one outside what its session may read: ${scriptPath}`,
  );
  const file = resolve(project, scriptPath);
  if (!folders.some((folder) => within(file, folder))) throw outside;
  const real = await realPlaceIn(file, folders).catch((cause: NodeJS.ErrnoException) => {
    if (cause.code === "ENOENT") throw new WorkflowScriptError(`Workflow script file not found: ${scriptPath}`, { cause });
    throw new WorkflowScriptError(`Failed to read workflow script file ${scriptPath} (${cause.code ?? cause.message})`, { cause });
  });
  if (real === undefined) throw outside;
  const source = await readScriptFile(real, scriptPath);
  if (source === undefined) throw new WorkflowScriptError(`Workflow script file not found: ${scriptPath}`);
  return { name: scriptPath, file, source };
}
