/**
 * What the benchmarks read from Linux /proc about the process running them
 * and its children: its own peak RSS, CPU of the children it has reaped, and
 * whether its claude children are gone yet.
 */
import { execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";

const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** The fields of /proc/<pid>/stat after the command name: [state, ppid, …]. */
async function statFields(pid: number | "self"): Promise<string[] | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * This process's peak resident set, in MB (VmHWM). Not getrusage's maxrss: that one
 * keeps the peak of the parent it was forked from, a large bench parent included.
 */
export async function peakRssMb(): Promise<number> {
  const status = await readFile("/proc/self/status", "utf8");
  return Number(/^VmHWM:\s*(\d+)/m.exec(status)?.[1] ?? 0) / 1024;
}

/** CPU of reaped children so far, in ms (cutime + cstime): the claude processes and whatever they started. */
export async function reapedChildrenCpuMs(): Promise<number> {
  const fields = (await statFields("self"))!;
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}

/** Live claude children of this process: pid → resident set in bytes. */
export async function claudeChildren(): Promise<Map<number, number>> {
  const children = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, "utf8").catch(() => "");
    const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1];
    if (Number(field("PPid")) !== process.pid || !field("Name")?.startsWith("claude")) continue;
    children.set(Number(entry), Number.parseInt(field("VmRSS") ?? "0", 10) * 1024);
  }
  return children;
}

/**
 * Waits until every claude child has been reaped (a child's CPU counts only then).
 * Other children are not waited for: cadre's reaper lives as long as cadre.
 */
export async function claudeChildrenReaped(withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while ((await claudeChildren()).size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** Another process's own CPU so far (utime + stime, in ms), and its resident set now and at its peak (MB); undefined once it is gone. */
export async function processUsage(pid: number): Promise<{ cpuMs: number; rssMb: number; peakRssMb: number } | undefined> {
  const fields = await statFields(pid);
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => undefined);
  if (fields === undefined || status === undefined) return undefined;
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS, rssMb: kb("VmRSS") / 1024, peakRssMb: kb("VmHWM") / 1024 };
}
