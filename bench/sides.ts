/**
 * Running one side of a comparison (bench/orchestrator-run.ts) in its own node
 * process against the rehearsal server here, and the helpers both benchmarks
 * print with.
 */
import { execFile, execFileSync } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { promisify } from "node:util";
import type { RehearsalServer } from "../src/rehearsal/server.ts";
import { locateClaude } from "../src/worker/index.ts";
import type { RunReport, Side } from "./orchestrator-run.ts";

/** The script every benchmark task plays: one text reply naming the prompt. */
export const SCRIPT = "bench";
export const SCRIPTS = { [SCRIPT]: [{ text: "done {{prompt}}" }] };
const RUNNER = resolve(import.meta.dirname, "orchestrator-run.ts");
/** The claude cadre finds, the pinned one in a clone: both sides run it. */
export const CLAUDE_BIN = locateClaude();
/** What the claude both sides run says it is (`2.1.332 (Claude Code)` → `2.1.332`). */
export const CLAUDE_VERSION = execFileSync(CLAUDE_BIN, ["--version"], { encoding: "utf8" }).trim().split(" ")[0];

const run = promisify(execFile);

/**
 * Runs `tasks` one-turn tasks on one side; throws unless every one reached the model and came back right.
 * `processMs` is the side's whole process, spawn to exit, as the parent saw it.
 */
export async function runSide(server: RehearsalServer, side: Side, tasks: number, concurrency: number): Promise<RunReport & { processMs: number }> {
  // Counted since the server started (its list of requests keeps only the latest).
  const before = server.outcomes.played;
  const args = ["--import", "tsx", RUNNER, side, String(tasks), String(concurrency), server.baseUrlFor(SCRIPT)];
  const spawned = performance.now();
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const processMs = performance.now() - spawned;
  const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as RunReport;
  const played = server.outcomes.played - before;
  if (report.failures.length > 0 || played !== tasks) {
    throw new Error(
      `${side} at concurrency ${concurrency}: ${played} of ${tasks} turns reached the model; failures:\n  ${report.failures.join("\n  ")}`,
    );
  }
  return { ...report, processMs };
}

/** Reports of several rounds as one: times summed, peak RSS the largest. */
export function total(reports: RunReport[]): RunReport {
  const sum = (pick: (r: RunReport) => number) => reports.reduce((acc, r) => acc + pick(r), 0);
  return {
    ...reports[0]!,
    tasks: sum((r) => r.tasks),
    wallMs: sum((r) => r.wallMs),
    ownCpuMs: sum((r) => r.ownCpuMs),
    workersCpuMs: sum((r) => r.workersCpuMs),
    maxRssMb: Math.max(...reports.map((r) => r.maxRssMb)),
  };
}

const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * CPU in ms from /proc/<pid>/stat: the process's own (utime + stime), or that
 * of the children it has reaped (cutime + cstime: the claude processes and
 * whatever they started).
 */
export async function cpuMs(pid: number | "self", of: "own" | "reaped children" = "own"): Promise<number> {
  const fields = statFields(await readFile(`/proc/${pid}/stat`, "utf8"));
  const first = of === "own" ? 11 : 13;
  return ((Number(fields[first]) + Number(fields[first + 1])) * 1000) / CLOCK_TICKS;
}

/** Pids of this process's children not yet reaped, those whose process name starts with `name` if given. */
export async function childPids(name = ""): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    if (stat !== "" && Number(statFields(stat)[1]) === process.pid && comm.startsWith(name)) pids.push(Number(entry));
  }
  return pids;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
export const load = () => loadavg()[0]!.toFixed(1);
