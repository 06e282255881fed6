/**
 * The watchdog that src/util/reaper.ts runs as a process of its own: plain
 * JavaScript with node: built-ins only, so that Node (`node -e`) and Deno
 * (`deno eval`) both run it as it is. It is a string rather than a file
 * because cadre also runs bundled (dist/cli) and compiled file by file (dist/),
 * where a file beside this module would not be found; the tests run it on both
 * runtimes.
 *
 * cadre writes one JSON array per line on its stdin:
 *   ["watch", pid, mark, start]  kill this process and everything below it if cadre goes;
 *                         processes whose environment holds the mark (CADRE_GROUP, a list
 *                         of marks: those of the cadres above, then this one's) are below
 *                         it, even once reparented (a tool's own session);
 *                         start is the process's start time (/proc/<pid>/stat), so that
 *                         a pid the system has since given to another process is left alone
 *   ["forget", pid]  it has exited: kill what it left behind (its mark's processes)
 *   ["kill", pid]    kill it and everything below it (its mark's processes too) now
 *   ["remove", path] remove this directory if cadre goes
 *   ["keep", path]   cadre removed it itself
 * The end of stdin means cadre is gone, however it went: every watched process
 * tree is killed, every directory removed, and the reaper exits.
 */
/** The environment variable that carries a process's marks, and what separates them. */
export const MARK_VARIABLE = "CADRE_GROUP";
export const MARK_SEPARATOR = ":";

export const REAPER_SCRIPT = String.raw`
import { readdirSync, readFileSync, rmSync } from "node:fs";
import process from "node:process";

/** pid → { mark, start } (either may be undefined) */
const watched = new Map();
const directories = new Set();

/** pid → parent pid of every live process; empty where there is no /proc. */
function parents() {
  const table = new Map();
  let entries = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return table;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync("/proc/" + entry + "/stat", "utf8");
    } catch {
      continue;
    }
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state !== "Z" && state !== "X") table.set(Number(entry), Number(ppid));
  }
  return table;
}

/** The process's start time in clock ticks since boot, or undefined where there is no /proc. */
function startOf(pid) {
  try {
    const stat = readFileSync("/proc/" + pid + "/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  } catch {
    return undefined;
  }
}

/** Watched pids still held by the process that was watched: on a busy machine pids wrap and are given again. */
function stillWatched() {
  return [...watched].filter(([pid, { start }]) => start === undefined || startOf(pid) === start).map(([pid]) => pid);
}

function marksOf(pids) {
  return pids.map((pid) => watched.get(pid)?.mark);
}

/** Live processes whose environment carries one of these marks (readable for our own user's processes). */
function marked(marks) {
  const wanted = new Set([...marks].filter((mark) => typeof mark === "string"));
  const found = [];
  if (wanted.size === 0) return found;
  for (const pid of parents().keys()) {
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = readFileSync("/proc/" + pid + "/environ", "utf8");
    } catch {
      continue;
    }
    const entry = environ.split("\0").find((entry) => entry.startsWith("${MARK_VARIABLE}="));
    if (entry?.slice(${MARK_VARIABLE.length + 1}).split("${MARK_SEPARATOR}").some((mark) => wanted.has(mark))) found.push(pid);
  }
  return found;
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Kills the roots and every process below them. The claude CLI starts its tools in
 * sessions of their own, so process groups do not reach them: the tree is walked
 * instead, stopping each process first (a stopped process cannot start another), until
 * a walk finds nothing new; then all of them are killed.
 */
function killTrees(allRoots) {
  // Never itself: a pid it watched may have been reused, and stopping itself mid-walk would leave the rest stopped, alive.
  const roots = allRoots.filter((pid) => pid !== process.pid);
  const stopped = new Set([process.pid]);
  for (let fresh = [...roots]; fresh.length > 0; ) {
    for (const pid of fresh) {
      signal(pid, "SIGSTOP");
      stopped.add(pid);
    }
    const children = new Map();
    for (const [pid, ppid] of parents()) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    fresh = [...stopped].flatMap((pid) => children.get(pid) ?? []).filter((pid) => !stopped.has(pid));
  }
  stopped.delete(process.pid);
  for (const pid of stopped) signal(pid, "SIGKILL");
  // Each root leads its own process group: this reaches its group even without /proc.
  for (const pid of roots) signal(-pid, "SIGKILL");
  return stopped;
}

/** A zombie is not running: its parent is gone and it waits only for init to reap it. */
function isRunning(pid) {
  let stat;
  try {
    stat = readFileSync("/proc/" + pid + "/stat", "utf8");
  } catch {
    return process.platform !== "linux" && signal(pid, 0);
  }
  return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function cadreIsGone() {
  const killed = killTrees([...stillWatched(), ...marked(marksOf([...watched.keys()]))]);
  // The directories may be the killed processes' HOME: remove them once nothing writes there.
  for (let waited = 0; [...killed].some(isRunning) && waited < 3_000; waited += 50) await sleep(50);
  for (const path of directories) {
    try {
      rmSync(path, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // Nothing more can be done for it.
    }
  }
  process.exit(0);
}

function obey(line) {
  let op, arg, mark, start;
  try {
    [op, arg, mark, start] = JSON.parse(line);
  } catch {
    return;
  }
  if (op === "watch") watched.set(arg, { mark: mark ?? undefined, start: start ?? undefined });
  else if (op === "forget") {
    const left = marked(marksOf([arg]));
    watched.delete(arg);
    if (left.length > 0) killTrees(left);
  } else if (op === "kill") killTrees([arg, ...marked(marksOf([arg]))]);
  else if (op === "remove") directories.add(arg);
  else if (op === "keep") directories.delete(arg);
}

let partial = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  const lines = (partial + chunk).split("\n");
  partial = lines.pop();
  for (const line of lines) obey(line);
});
process.stdin.on("end", () => void cadreIsGone());
process.stdin.on("error", () => void cadreIsGone());
`;
