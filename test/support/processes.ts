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

/** Pids of live claude processes that are children of this process (Linux /proc). */
export async function liveClaudeChildren(): Promise<number[]> {
  const { readdir } = await import("node:fs/promises");
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (Number(ppid) === process.pid && comm.startsWith("claude") && state !== "Z" && state !== "X") pids.push(Number(entry));
  }
  return pids;
}

/** Samples liveClaudeChildren() every intervalMs until stopped; reports the peak. */
export function sampleClaudeChildren(intervalMs = 25): { stop(): Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      peak = Math.max(peak, (await liveClaudeChildren()).length);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return peak;
    },
  };
}
