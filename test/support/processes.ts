// Process checks through Linux /proc. Only node: APIs, so the Deno tests use them too.
import { readdir, readFile } from "node:fs/promises";
import process from "node:process";

interface ProcessEntry {
  ppid: number;
  comm: string;
}

/** Every live process (zombies excluded): pid → parent pid and command name. */
async function processTable(): Promise<Map<number, ProcessEntry>> {
  const table = new Map<number, ProcessEntry>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close < 0) continue;
    const [state, ppid] = stat.slice(close + 2).split(" ");
    if (state === "Z" || state === "X") continue;
    table.set(Number(entry), { ppid: Number(ppid), comm: stat.slice(stat.indexOf("(") + 1, close) });
  }
  return table;
}

/** Whether a process with this pid exists right now (a zombie counts; see isGone). */
export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when no live process has this pid: it is gone, or a zombie waiting for a parent to reap it. */
async function gone(pid: number): Promise<boolean> {
  if (!isAlive(pid)) return true;
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

/** Every live process below `root`, with its parent and command name (in pid order, which says nothing of age once pids wrap). */
export async function descendants(root: number): Promise<{ pid: number; ppid: number; comm: string }[]> {
  const table = await processTable();
  const below = (pid: number): boolean => {
    for (let p = table.get(pid)?.ppid; p !== undefined && p > 1; p = table.get(p)?.ppid) if (p === root) return true;
    return false;
  };
  return [...table].filter(([pid]) => below(pid)).map(([pid, { ppid, comm }]) => ({ pid, ppid, comm }));
}

/** Pids of live claude processes below `root`. */
export async function claudeDescendants(root: number): Promise<number[]> {
  return (await descendants(root)).filter((p) => p.comm.startsWith("claude")).map((p) => p.pid);
}

/** Pids of live claude processes that are direct children of this process. */
export async function liveClaudeChildren(): Promise<number[]> {
  const table = await processTable();
  return [...table].filter(([, p]) => p.ppid === process.pid && p.comm.startsWith("claude")).map(([pid]) => pid);
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

/** Pids of live processes (this one aside) whose command line contains `text`: a test's own temp path names the tools its agents ran. */
export async function processesMentioning(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of (await processTable()).keys()) {
    if (pid === process.pid) continue;
    const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (command.includes(text)) found.push(pid);
  }
  return found;
}
