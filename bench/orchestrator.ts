/**
 * cadre's Orchestrator against the official Agent SDK's query() (npm run bench):
 * the same short tasks, the same pinned claude binary, the same rehearsal server,
 * in the same run.
 *
 * Each side runs in its own node process (bench/orchestrator-run.ts), so its CPU
 * time and peak RSS are its own; the rehearsal server runs here. A warm-up run
 * first fills the disk cache with the claude binary. The sides take turns going
 * first, so that load drifting on a shared machine hits them alike; the load
 * average is printed because other work on the machine moves wall times a lot.
 *
 * Environment: BENCH_ROUNDS=n repeats each comparison n times (default 1; wall
 * and CPU are summed over the rounds); BENCH_NOPEER=1 adds cadre without its
 * built-in peer-tools MCP server.
 *
 * Goals (reported, not asserted): wall time cadre/sdk <= 1.0, and cadre's own
 * CPU <= 5 % of its workers' CPU.
 */
import { startRehearsalServer } from "../src/rehearsal/server.ts";
import type { RunReport, Side } from "./orchestrator-run.ts";
import { CLAUDE_VERSION, load, runSide, SCRIPTS, seconds as s, total } from "./sides.ts";

const TASKS = 32;
const CONCURRENCIES = [4, 8];
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1) || 1);
const SIDES: Side[] = process.env.BENCH_NOPEER === "1" ? ["cadre", "sdk", "cadre-nopeer"] : ["cadre", "sdk"];
const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

async function main(): Promise<void> {
  const server = await startRehearsalServer({ scripts: SCRIPTS });
  const benchStarted = Date.now();
  try {
    for (const side of SIDES) await runSide(server, side, 2, 2);
    console.log(`${TASKS} one-turn tasks per run, ${ROUNDS} round(s), claude ${CLAUDE_VERSION} against a rehearsal server on loopback`);
    console.log(`(2 CPUs here are shared: the 1-minute load average is shown; wall times move with it)\n`);
    let turn = 0;
    for (const concurrency of CONCURRENCIES) {
      const runs = new Map<Side, RunReport[]>(SIDES.map((side) => [side, []]));
      const loadBefore = load();
      for (let round = 0; round < ROUNDS; round++, turn++) {
        // Rotate who goes first.
        const order = SIDES.map((_, i) => SIDES[(i + turn) % SIDES.length]!);
        for (const side of order) runs.get(side)!.push(await runSide(server, side, TASKS, concurrency));
      }
      const r = Object.fromEntries([...runs].map(([side, reports]) => [side, total(reports)])) as Record<Side, RunReport>;
      console.log(`concurrency ${concurrency} (load ${loadBefore} → ${load()}):`);
      for (const side of SIDES) {
        const ratio = side === "sdk" ? "" : `   ${side}/sdk ${(r[side].wallMs / r.sdk.wallMs).toFixed(2)}`;
        console.log(`  ${side.padEnd(12)} wall ${s(r[side].wallMs).padStart(7)}${ratio}`);
      }
      for (const side of SIDES) {
        const { ownCpuMs, workersCpuMs, tasks } = r[side];
        console.log(
          `  ${side.padEnd(12)} CPU ${s(ownCpuMs)} own vs ${s(workersCpuMs)} workers = ${pct(ownCpuMs, workersCpuMs)}` +
            `   (${(workersCpuMs / tasks / 1000).toFixed(2)} CPU-s per worker)   peak RSS ${r[side].maxRssMb.toFixed(0)} MB`,
        );
      }
    }
    console.log(`\nbench took ${s(Date.now() - benchStarted)}`);
  } finally {
    await server.close();
  }
}

await main();
