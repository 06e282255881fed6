/**
 * Warm workers (npm run bench, after bench/orchestrator.ts): spare processes and
 * process reuse, in one run against the rehearsal server, the same pinned claude.
 *
 * 1. Time from a session's request to its child's first assistant message, taking
 *    a spare vs starting cold. Per round, a fresh Orchestrator in this process,
 *    with a spare (prewarm, waited for) or without; the kinds alternate. Goal
 *    (reported, not asserted): the spare at least 4x faster.
 * 2. 32 one-turn tasks at concurrency 4: cadre with reuse: true against the Agent
 *    SDK's query() per task (goal: at most 0.6x its wall time) and against cadre
 *    without reuse, each side in its own process (bench/orchestrator-run.ts) so its
 *    CPU is its own; CPU-seconds per task (the workers' and cadre's own) per side.
 *
 * Environment: BENCH_ROUNDS=n repeats part 2 n times, rotating who goes first
 * (default 1); BENCH_FIRST_REPLIES=n sets the rounds of part 1 per kind (default 5).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Orchestrator } from "../src/orchestrator/index.ts";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { type RehearsalServer, startRehearsalServer } from "../src/rehearsal/server.ts";
import type { RunReport, Side } from "./orchestrator-run.ts";
import { CLAUDE_BIN, CLAUDE_VERSION, childPids, cpuMs, load, runSide, SCRIPT, SCRIPTS, seconds, total } from "./sides.ts";

const TASKS = 32;
const CONCURRENCY = 4;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1) || 1);
const FIRST_REPLIES = Math.max(1, Number(process.env.BENCH_FIRST_REPLIES ?? 5) || 5);
const SIDES: Side[] = ["cadre-reuse", "cadre", "sdk"];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => `${Math.round(value)} ms`;

/**
 * From a session's first send to its child's first assistant message: the
 * wall time, and the CPU the child spent in it (a cold child's start included;
 * a spare's start was paid before).
 */
async function firstReply(server: RehearsalServer, home: string, withSpare: boolean): Promise<{ wallMs: number; cpuMs: number }> {
  const env = { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor(SCRIPT), home }), TMPDIR: join(home, "tmp") };
  const orchestrator = new Orchestrator({
    defaults: { cwd: join(home, "work"), claudePath: CLAUDE_BIN },
    workerOptions: () => ({ inheritEnv: false, env }),
  });
  try {
    if (withSpare) await orchestrator.prewarm({}, 1);
    const [spare] = await childPids("claude");
    const spareCpu = spare === undefined ? 0 : await cpuMs(spare);
    const replied = new Promise<number>((resolve) => {
      orchestrator.on((event) => event.type === "task_message" && event.message.type === "assistant" && resolve(performance.now()));
    });
    const session = orchestrator.openSession({ name: "child" });
    const sent = performance.now();
    const turn = session.send("hello");
    const at = await replied;
    const childCpu = await cpuMs(session.pid!);
    if ((await turn).text !== "done hello") throw new Error("the child did not answer as scripted");
    if (withSpare && session.pid !== spare) throw new Error("the session did not take the spare");
    return { wallMs: at - sent, cpuMs: childCpu - spareCpu };
  } finally {
    await orchestrator.close();
  }
}

async function spareVersusCold(server: RehearsalServer): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), "cadre-bench-warm-"));
  await Promise.all([mkdir(join(home, "work")), mkdir(join(home, "tmp"))]);
  try {
    await firstReply(server, home, false);
    const runs = { cold: [] as { wallMs: number; cpuMs: number }[], spare: [] as { wallMs: number; cpuMs: number }[] };
    const loadBefore = load();
    for (let round = 0; round < FIRST_REPLIES; round++) {
      // Alternate who goes first, so that load drifting on a shared machine hits both alike.
      for (const kind of round % 2 === 0 ? (["cold", "spare"] as const) : (["spare", "cold"] as const)) {
        runs[kind].push(await firstReply(server, home, kind === "spare"));
      }
    }
    const wall = (kind: keyof typeof runs) => median(runs[kind].map((r) => r.wallMs));
    const cpu = (kind: keyof typeof runs) => median(runs[kind].map((r) => r.cpuMs));
    console.log(`request to the child's first assistant message, median of ${FIRST_REPLIES} (load ${loadBefore} → ${load()}):`);
    for (const kind of ["cold", "spare"] as const) {
      const all = runs[kind].map((r) => ms(r.wallMs)).join(", ");
      console.log(`  ${kind.padEnd(6)} ${ms(wall(kind)).padStart(8)} wall, the child's CPU ${ms(cpu(kind)).padStart(7)}   (${all})`);
    }
    console.log(
      `  spare is ${(wall("cold") / wall("spare")).toFixed(1)}x faster (goal: >= 4x); ${(cpu("cold") / cpu("spare")).toFixed(1)}x less CPU until then\n`,
    );
  } finally {
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function reuseVersusSdk(server: RehearsalServer): Promise<void> {
  const runs = new Map<Side, RunReport[]>(SIDES.map((side) => [side, []]));
  const loadBefore = load();
  for (let round = 0; round < ROUNDS; round++) {
    const order = SIDES.map((_, i) => SIDES[(i + round) % SIDES.length]!);
    for (const side of order) runs.get(side)!.push(await runSide(server, side, TASKS, CONCURRENCY));
  }
  const r = Object.fromEntries([...runs].map(([side, reports]) => [side, total(reports)])) as Record<Side, RunReport>;
  const reuse = r["cadre-reuse"];
  console.log(`${TASKS} one-turn tasks at concurrency ${CONCURRENCY}, ${ROUNDS} round(s) (load ${loadBefore} → ${load()}):`);
  for (const side of SIDES) {
    const { wallMs, workersCpuMs, ownCpuMs, tasks } = r[side];
    const perTask = (cpu: number) => (cpu / tasks / 1000).toFixed(2);
    console.log(
      `  ${side.padEnd(12)} wall ${seconds(wallMs).padStart(7)}   CPU per task ${perTask(workersCpuMs + ownCpuMs)} s ` +
        `(workers ${perTask(workersCpuMs)} s, own ${perTask(ownCpuMs)} s)   peak RSS ${r[side].maxRssMb.toFixed(0)} MB`,
    );
  }
  console.log(
    `  reuse/sdk wall ${(reuse.wallMs / r.sdk.wallMs).toFixed(2)} (goal: <= 0.6); reuse/cadre wall ${(reuse.wallMs / r.cadre.wallMs).toFixed(2)}`,
  );
}

async function main(): Promise<void> {
  const server = await startRehearsalServer({ scripts: SCRIPTS });
  const started = Date.now();
  try {
    // Warm-up: the claude binary into the disk cache, each side's code loaded once.
    for (const side of SIDES) await runSide(server, side, 2, 2);
    console.log(`warm workers: claude ${CLAUDE_VERSION} against a rehearsal server on loopback (2 shared CPUs; the load average is shown)\n`);
    await spareVersusCold(server);
    await reuseVersusSdk(server);
    console.log(`\nbench took ${seconds(Date.now() - started)}`);
  } finally {
    await server.close();
  }
}

await main();
