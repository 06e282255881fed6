// Helpers for the Deno tests (run by `deno test`, not vitest). Only node: APIs,
// so tsc checks these files with the rest of test/ and Deno runs them as they are.
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DENO_JSON = join(ROOT, "deno.json");

/** The deno binary these tests run under (the `deno` devDependency in CI). */
export const DENO = process.execPath;

/** A private HOME with a work and a temp directory inside; `remove` deletes it all. */
export async function tempHome(): Promise<{ home: string; cwd: string; tmp: string; remove: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), "cadre-deno-test-"));
  const cwd = join(home, "work");
  const tmp = join(home, "tmp");
  await Promise.all([mkdir(cwd), mkdir(tmp)]);
  return { home, cwd, tmp, remove: () => rm(home, { recursive: true, force: true, maxRetries: 3 }) };
}

/** Every live process below `root` (Linux /proc), with its command name. */
export async function descendants(root: number): Promise<{ pid: number; comm: string }[]> {
  const parent = new Map<number, number>();
  const comms = new Map<number, string>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (state === "Z" || state === "X") continue;
    parent.set(Number(entry), Number(ppid));
    comms.set(Number(entry), stat.slice(stat.indexOf("(") + 1, close));
  }
  const found: { pid: number; comm: string }[] = [];
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        found.push({ pid, comm: comms.get(pid)! });
        break;
      }
    }
  }
  return found;
}

/** True when `pid` is gone (or a zombie) within `withinMs`. */
export async function isGone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (stat === "" || state === "Z" || state === "X") return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills whatever is still alive among `pids`, so a failed test leaves nothing behind. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
