import { readFile } from "node:fs/promises";

/** True when no live process has this pid: it is gone, or a zombie waiting for a parent to reap it. */
async function gone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "Z" || state === "X";
}

/** Waits briefly for a killed process to go (signals are delivered asynchronously). */
export async function isGone(pid: number, withinMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await gone(pid)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
