// Makes a directory and its missing parents without Node's recursive mkdir, which spins forever under /proc.
import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/**
 * `mkdir -p`, one level at a time. Node's `mkdir(path, { recursive: true })`
 * retries a child each time its parent turns out to exist; where the parent
 * exists and still answers ENOENT for any new name (procfs, a dangling
 * symlink), that loop never ends and burns a core. Here a second ENOENT, once
 * the parent is there, is final. A path that exists as a file is ENOTDIR.
 */
export function makeDirectory(path: string): void {
  try {
    mkdirSync(path);
  } catch (error) {
    const code = codeOf(error);
    if (code === "EEXIST") {
      if (statSync(path).isDirectory()) return;
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: "ENOTDIR", path, cause: error });
    }
    const parent = dirname(path);
    if (code !== "ENOENT" || parent === path) throw error;
    makeDirectory(parent);
    try {
      mkdirSync(path);
    } catch (again) {
      // Made meanwhile by someone else: what we wanted.
      if (codeOf(again) !== "EEXIST" || !statSync(path).isDirectory()) throw again;
    }
  }
}
