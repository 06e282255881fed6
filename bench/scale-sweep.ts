/**
 * cadre's own cost as a run grows (npm run bench:scale, first part): the
 * real `cadre run` of 1,000 / 3,000 / 10,000 one-turn tasks (a for_each,
 * `reuse: true`, concurrency 8) whose real claude workers talk to a scripted
 * model outside cadre (a rehearsal server in this process, as a user's
 * outside model would be). Sampled from /proc while it runs: cadre's own CPU
 * (not its workers') per task for each thousand tasks ended, its resident
 * set (as the last task ended, and its lowest and highest while the last
 * thousand ran: V8 lets garbage build up between collections), and the bytes
 * it wrote to the run directory per task end (the journal, and each
 * summary.json written; transcripts aside), by thousand. The first
 * thousand counts from the first task's end; the whole run's figures include
 * start-up and the last record.
 *
 * With BENCH_HOSTS=2 the same runs go through `cadre run --redis` to that many
 * `cadre worker` hosts (a redis-server of the bench's own; the slots split
 * between the hosts): the figures are then the coordinator's, and a line per
 * size gives the hosts' own CPU per task and their largest RSS at the end.
 *
 * With BENCH_STAND_IN=1 the workers are bench/stand-in-claude.mjs, which speaks the
 * protocol without a model or tools: cadre's own overhead at sizes (50,000) whose real
 * workers would need more CPU than a machine here has. Its figures say so.
 *
 * Environment: BENCH_SIZES (default 1000,3000,10000), BENCH_CONCURRENCY (8), BENCH_HOSTS (0: in-process),
 * BENCH_STAND_IN (0: the real claude), BENCH_NODE_OPTIONS (one option for cadre's own node, e.g. --import of a heap profiler).
 * Linux only (/proc). On a shared machine the CPU figures are cadre's own,
 * but the tasks per second depend on what else runs: the load is printed.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, open, rm, stat, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { startRehearsalServer } from "../src/rehearsal/server.ts";
import { JOURNAL_FILE } from "../src/run/record/journal.ts";
import { SUMMARY_FILE } from "../src/run/record/schema.ts";
import { BIN, type Redis, startHosts, startRedis } from "./fleet.ts";
import { processUsage } from "./proc.ts";

const SIZES = (process.env.BENCH_SIZES ?? "1000,3000,10000").split(",").map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8) || 8;
const HOSTS = Number(process.env.BENCH_HOSTS ?? 0) || 0;
const STAND_IN = process.env.BENCH_STAND_IN === "1";
const SAMPLE_MS = 200;

/** One thousand tasks' share of the run, from the samples around it. */
interface Bucket {
  cpuMsPerTask: number;
  bytesPerTask: number;
  tasksPerSecond: number;
}

interface SizeReport {
  tasks: number;
  buckets: Bucket[];
  /** Over the whole life of the process (start-up and the last record included); the RSS as the last task ended. */
  cpuMsPerTask: number;
  rssEndMb: number;
  /** The lowest and highest RSS sampled while the last thousand tasks ran: V8 lets garbage build up between collections. */
  rssLastMb: { low: number; high: number };
  peakRssMb: number;
  bytesPerTask: number;
  wallS: number;
  load: string;
  /** With BENCH_HOSTS: the hosts' own CPU per task (all hosts), and the largest host RSS as the last task ended. */
  hosts?: { cpuMsPerTask: number; rssEndMb: number };
}

/** Follows the run directory: tasks ended (journal lines of ended tasks) and bytes written there. */
class RunDirectory {
  #offset = 0;
  #partial = "";
  #summaryIno = -1;
  ended = 0;
  bytes = 0;

  constructor(readonly dir: string) {}

  async poll(): Promise<void> {
    const summary = await stat(join(this.dir, SUMMARY_FILE)).catch(() => undefined);
    // Each write is a new file renamed over the last: a new inode is one more summary written.
    if (summary !== undefined && summary.ino !== this.#summaryIno) {
      this.#summaryIno = summary.ino;
      this.bytes += summary.size;
    }
    const file = await open(join(this.dir, JOURNAL_FILE)).catch(() => undefined);
    if (file === undefined) return;
    try {
      const { size } = await file.stat();
      if (size <= this.#offset) return;
      const buffer = Buffer.alloc(size - this.#offset);
      await file.read(buffer, 0, buffer.length, this.#offset);
      this.#offset = size;
      this.bytes += buffer.length;
      const lines = (this.#partial + buffer.toString("utf8")).split("\n");
      this.#partial = lines.pop() ?? "";
      for (const line of lines) if (!/"status":"(running|pending)"/.test(line)) this.ended++;
    } finally {
      await file.close();
    }
  }
}

/** The hosts' own CPU so far (ms, all of them) and the largest resident set among them now (MB). */
async function hostsUsage(pids: number[]): Promise<{ cpuMs: number; rssMb: number }> {
  const usages = await Promise.all(pids.map(processUsage));
  return {
    cpuMs: usages.reduce((sum, usage) => sum + (usage?.cpuMs ?? 0), 0),
    rssMb: Math.max(0, ...usages.map((usage) => usage?.rssMb ?? 0)),
  };
}

async function runSize(tasks: number, baseUrl: string, root: string, redis: Redis | undefined): Promise<SizeReport> {
  const dir = join(root, `n${tasks}`);
  await mkdir(join(dir, "home"), { recursive: true });
  const config = join(dir, "swarm.yaml");
  const items = Array.from({ length: tasks }, (_, i) => `i${i}`).join(", ");
  await writeFile(
    config,
    [
      "name: sweep",
      `concurrency: ${CONCURRENCY}`,
      "defaults: { reuse: true }",
      "tasks:",
      `  - { name: "t-{{item}}", prompt: "item {{item}}", for_each: [${items}] }`,
      "",
    ].join("\n"),
  );
  const out = join(dir, "run");
  const env = {
    ...offlineClaudeEnv({ baseUrl, home: join(dir, "home") }),
    TMPDIR: dir,
    ...(STAND_IN && { CADRE_CLAUDE_BIN: fileURLToPath(new URL("stand-in-claude.mjs", import.meta.url)) }),
  };
  const hosts = redis && (await startHosts(redis.url, HOSTS, Math.ceil(CONCURRENCY / HOSTS), env));
  const hostPids = hosts?.processes.map((host) => host.pid!) ?? [];
  const hostsAtStart = await hostsUsage(hostPids);
  let hostsAtEnd = hostsAtStart;
  const fleet = redis ? ["--redis", redis.url] : [];
  const started = performance.now();
  const nodeOptions = process.env.BENCH_NODE_OPTIONS ? [process.env.BENCH_NODE_OPTIONS] : [];
  const child = spawn(process.execPath, [...nodeOptions, BIN, "run", config, "--out", out, ...fleet], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<number | null>((done) => child.once("exit", done));
  let running = true;
  void exited.then(() => (running = false));
  const run = new RunDirectory(out);
  // From the first task's end: start-up (loading, the first summary, the workers' first start) is in the whole run's figure only.
  const marks: { ended: number; cpuMs: number; bytes: number; at: number; rssMb: number }[] = [];
  let last: Awaited<ReturnType<typeof processUsage>>;
  const freshRange = () => ({ low: Number.POSITIVE_INFINITY, high: 0 });
  let rssSinceMark = freshRange();
  let rssLastMb = freshRange();
  while (running) {
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    const usage = await processUsage(child.pid!);
    if (usage === undefined) break;
    last = usage;
    rssSinceMark = { low: Math.min(rssSinceMark.low, usage.rssMb), high: Math.max(rssSinceMark.high, usage.rssMb) };
    await run.poll();
    // The last mark is at the last task's end, however many tasks that thousand has.
    const next = marks.length === 0 ? 1 : Math.min(tasks, (marks.length - 1) * 1000 + 1000);
    if (run.ended >= next && marks.at(-1)?.ended !== tasks) {
      marks.push({ ended: run.ended, cpuMs: usage.cpuMs, bytes: run.bytes, at: performance.now(), rssMb: usage.rssMb });
      rssLastMb = rssSinceMark;
      rssSinceMark = freshRange();
      if (run.ended === tasks && hosts) hostsAtEnd = await hostsUsage(hostPids);
    }
  }
  const code = await exited;
  await hosts?.stop();
  await run.poll();
  if (code !== 0 || run.ended !== tasks) throw new Error(`${tasks} tasks: exit ${code}, ${run.ended} ended`);
  const buckets = marks.slice(1).map((mark, i) => {
    const before = marks[i]!;
    const count = mark.ended - before.ended;
    return {
      cpuMsPerTask: (mark.cpuMs - before.cpuMs) / count,
      bytesPerTask: (mark.bytes - before.bytes) / count,
      tasksPerSecond: (count * 1000) / (mark.at - before.at),
    };
  });
  return {
    tasks,
    buckets,
    cpuMsPerTask: last!.cpuMs / tasks,
    rssEndMb: marks.at(-1)!.rssMb,
    rssLastMb,
    peakRssMb: last!.peakRssMb,
    bytesPerTask: run.bytes / tasks,
    wallS: (performance.now() - started) / 1000,
    load: loadavg()[0]!.toFixed(1),
    ...(hosts && { hosts: { cpuMsPerTask: (hostsAtEnd.cpuMs - hostsAtStart.cpuMs) / tasks, rssEndMb: hostsAtEnd.rssMb } }),
  };
}

const f = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "cadre-bench-sweep-"));
  // Only counts are needed here: the server keeps few requests whatever the size.
  const server = await startRehearsalServer({ scripts: { sweep: [{ text: "done {{prompt}}" }] }, keepRequests: 10 });
  const redis = HOSTS > 0 ? await startRedis(root) : undefined;
  try {
    const where = redis ? `through Redis on ${HOSTS} cadre worker hosts (the coordinator's figures)` : "in one process";
    const workers = STAND_IN
      ? "a stand-in for claude (bench/stand-in-claude.mjs: the protocol, no model)"
      : "real claude workers, a scripted model outside cadre";
    console.log(`one-turn tasks with reuse at concurrency ${CONCURRENCY} ${where}, ${workers}`);
    console.log(
      "| tasks | cadre CPU / task (all) | first 1,000 | last 1,000 | last / first | RSS at end, over the last 1,000 (peak) | bytes / task end | tasks/s | load |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const size of SIZES) {
      const report = await runSize(size, server.baseUrlFor("sweep"), root, redis);
      const first = report.buckets[0]!;
      const lastBucket = report.buckets.at(-1)!;
      const rate = report.buckets.reduce((sum, b) => sum + b.tasksPerSecond, 0) / report.buckets.length;
      console.log(
        `| ${size.toLocaleString("en")} | ${f(report.cpuMsPerTask)} ms | ${f(first.cpuMsPerTask)} ms | ${f(lastBucket.cpuMsPerTask)} ms | ` +
          `${f(lastBucket.cpuMsPerTask / first.cpuMsPerTask, 2)} | ${f(report.rssEndMb, 0)} MB, ${f(report.rssLastMb.low, 0)}–${f(report.rssLastMb.high, 0)} (${f(report.peakRssMb, 0)}) | ` +
          `${f(report.bytesPerTask, 0)} (first ${f(first.bytesPerTask, 0)}, last ${f(lastBucket.bytesPerTask, 0)}) | ${f(rate)} | ${report.load} |`,
      );
      if (report.hosts)
        console.log(
          `|   hosts | ${f(report.hosts.cpuMsPerTask)} ms each task, all hosts | | | | ${f(report.hosts.rssEndMb, 0)} MB, the largest | | | |`,
        );
      if (process.env.BENCH_VERBOSE === "1") console.error(JSON.stringify(report));
    }
    console.log(`model requests played: ${server.outcomes.played}`);
  } finally {
    await redis?.stop();
    await server.close();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
