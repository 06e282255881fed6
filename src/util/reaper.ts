// The reaper: a small process that ends every worker and its tools when cadre is killed outright.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import process from "node:process";
import { execa } from "execa";
import { MARK_SEPARATOR, MARK_VARIABLE, REAPER_SCRIPT } from "./reaper-script.ts";

/** The same runtime as cadre runs the reaper's script: Node as an ES module, Deno without a project's config. */
function reaperCommand(): [string, string[]] {
  if (process.versions.deno !== undefined) return [process.execPath, ["eval", "--no-config", "--quiet", REAPER_SCRIPT]];
  return [process.execPath, ["--input-type=module", "--eval", REAPER_SCRIPT]];
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined without /proc. */
function startOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  } catch {
    return undefined;
  }
}

/**
 * A watchdog process (reaper-script.ts) that outlives cadre for a moment: when cadre
 * ends, however it ends (SIGKILL too), its end of a pipe closes, and the reaper kills
 * every process cadre asked it to watch (the claude workers), with everything below
 * them, and removes the directories cadre meant to remove. A claude whose stdin merely
 * closes finishes its turn first (model calls, tools), so cadre's death alone would
 * not end it.
 *
 * The reaper runs in a session of its own, so that a signal to cadre's process group
 * (Ctrl-C, a closing terminal) does not end it before cadre. It holds no reference to
 * cadre's event loop: cadre exits as if it were not there.
 */
class Reaper {
  readonly #child: ReturnType<typeof execa>;
  #running: boolean;
  #marks = 0;
  /** Marks name this process and a token of its own: its pid alone may have been another cadre's a moment ago. */
  readonly #markPrefix = `${process.pid}.${randomBytes(4).toString("hex")}`;

  constructor() {
    const [command, args] = reaperCommand();
    this.#child = execa(command, args, {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
      cleanup: false,
      reject: false,
      buffer: false,
    });
    this.#running = this.#child.pid !== undefined;
    void this.#child.then(() => (this.#running = false));
    this.#child.stdin!.on("error", () => (this.#running = false));
    this.#child.unref();
    (this.#child.stdin as { unref?: () => void } | null)?.unref?.();
  }

  #send(op: string, ...args: (number | string | null)[]): boolean {
    if (!this.#running) return false;
    this.#child.stdin!.write(`${JSON.stringify([op, ...args])}\n`);
    return true;
  }

  /**
   * A fresh mark for a process to watch, and the environment variable that
   * carries it: every process below it inherits it. The variable keeps the
   * marks this process inherited, before the new one, so that the reaper of a
   * cadre that started this one (a `cadre mcp` a claude worker runs, say) still
   * finds what it leaves behind.
   */
  nextMark(): { mark: string; env: Record<string, string> } {
    this.#marks += 1;
    const mark = `${this.#markPrefix}.${this.#marks}`;
    const inherited = process.env[MARK_VARIABLE];
    return { mark, env: { [MARK_VARIABLE]: inherited ? `${inherited}${MARK_SEPARATOR}${mark}` : mark } };
  }

  /**
   * Kill this process and everything below it if cadre ends without ending it. With a
   * mark, what carries the mark counts as below it even once reparented. Call it while
   * the process runs: its start time tells the reaper whether the pid is still its own.
   */
  watch(pid: number, mark?: string): void {
    this.#send("watch", pid, mark ?? null, startOf(pid) ?? null);
  }

  /** It has exited: its pid may be someone else's soon. What it left behind with its mark is killed. */
  forget(pid: number): void {
    this.#send("forget", pid);
  }

  /**
   * Kills the process and everything below it now. False when the reaper is not
   * running; the caller then signals the process itself.
   */
  killTree(pid: number): boolean {
    return this.#send("kill", pid);
  }

  /** Removes the directory if cadre ends without removing it; the returned function says cadre removed it. */
  removeOnExit(path: string): () => void {
    this.#send("remove", path);
    return () => void this.#send("keep", path);
  }
}

let instance: Reaper | undefined;

/** This process's reaper, started on first use. */
export function reaper(): Reaper {
  instance ??= new Reaper();
  return instance;
}

/** Removes `path` if this process ends, however it ends, without calling the returned function first. */
export function removeOnExit(path: string): () => void {
  return reaper().removeOnExit(path);
}
