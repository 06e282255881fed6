/**
 * Cache-aware fan-out (npm run bench:cache, also the end of npm run bench):
 * 12 one-turn tasks of one agent at concurrency 12 on the rehearsal server,
 * which simulates the API's prompt cache, once with the cache stagger and
 * once without, in alternating order.
 *
 * Reported per run: how many first requests wrote the shared prefix (read
 * nothing from the cache), the cost of the first turns (the CLI's
 * total_cost_usd, from the usage the server reports; the reply is a few
 * output tokens, so it is input cost), the wall time, and the leader's time
 * to first token (the scripted delay plus what the server took), and over
 * how long the first requests went out. Without the stagger, only requests
 * sent before the first response began write the prefix: where workers start
 * slower than the model answers (12 on 2 busy cores), some read it anyway.
 *
 * Goals (reported, not asserted): the shared prefix written at most twice,
 * ≥ 80 % less first-turn cost than without the stagger, and wall time no
 * more than the leader's time to first token above the run without it. The
 * first-turn cost includes what no stagger saves: each task writes its own
 * prompt and the environment block the CLI puts after it (about 2,400
 * tokens); the shared prefix's own saving is printed beside it.
 *
 * Then tasks in separate directories, as worktree tasks are (each its own
 * cwd), staggered, without and with excludeDynamicSections: without it the
 * system prompt names each directory's memory path, so no two share a
 * prefix; with it they share the prefix as tasks in one directory do.
 *
 * Environment: BENCH_ROUNDS=n repeats each comparison n times (default 1);
 * BENCH_TASKS=n runs n tasks at concurrency n instead of 12 (fewer than the
 * cores shows the stagger where the CPU is not the limit);
 * BENCH_TTFT_MS sets the scripted time to first token (default 2000, about
 * what a 20,000-token prompt takes to start answering).
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Orchestrator, type TaskResult } from "../src/orchestrator/index.ts";
import { offlineClaudeEnv, startRehearsalServer } from "../src/rehearsal/index.ts";

const TASKS = Math.max(2, Number(process.env.BENCH_TASKS ?? 12) || 12);
const CONCURRENCY = TASKS;
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1) || 1);
const TTFT_MS = Math.max(0, Number(process.env.BENCH_TTFT_MS ?? 2000) || 0);
const SCRIPT = "review";

interface CacheRun {
  staggered: boolean;
  /** Each task in its own directory (as in worktrees), and whether the prompt's dynamic sections were moved out. */
  separateDirs: boolean;
  excludeDynamicSections: boolean;
  /** First requests that read nothing from the cache: each wrote the shared prefix. */
  prefixWrites: number;
  /** The most any first request read: the shared prefix, when anyone read it. */
  sharedPrefixTokens: number;
  costUsd: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  wallMs: number;
  leaderTtftMs: number;
  /** From the first first request to the last: how far apart the workers asked. */
  sendSpreadMs: number;
}

async function runOnce(staggered: boolean, separateDirs = false, excludeDynamicSections = false): Promise<CacheRun> {
  // A fresh server and HOME per run: nothing cached from the run before.
  const server = await startRehearsalServer({ scripts: { [SCRIPT]: [{ text: "reviewed {{prompt}}", delay_ms: TTFT_MS }] } });
  const home = await mkdtemp(join(tmpdir(), "cadre-bench-cache-"));
  const cwd = join(home, "work");
  await mkdir(cwd);
  const dirs = Array.from({ length: TASKS }, (_, i) => (separateDirs ? join(home, `worktree-${i}`) : cwd));
  await Promise.all(dirs.map((dir) => mkdir(dir, { recursive: true })));
  const orchestrator = new Orchestrator({
    concurrency: CONCURRENCY,
    cacheStagger: staggered,
    agents: { reviewer: { description: "Reviews one file", prompt: "You review one file for bugs and say what you found." } },
    defaults: { cwd, ...(excludeDynamicSections && { excludeDynamicSections }) },
    workerOptions: () => ({ inheritEnv: false, env: offlineClaudeEnv({ baseUrl: server.baseUrlFor(SCRIPT), home }) }),
  });
  try {
    const started = Date.now();
    const results: TaskResult[] = [];
    const tasks = Array.from({ length: TASKS }, (_, i) => ({ name: `review-${i}`, agent: "reviewer", prompt: `src/file-${i}.ts`, cwd: dirs[i] }));
    for await (const result of orchestrator.map(tasks)) results.push(result);
    const wallMs = Date.now() - started;
    const failed = results.filter((r) => r.status !== "succeeded");
    if (failed.length > 0) throw new Error(`${failed.length} tasks failed: ${failed[0]!.error?.message}`);
    const first = server.requests.filter((r) => r.outcome === "played" && r.step === 0);
    const leader = first[0]!;
    const { usage } = orchestrator.totals;
    return {
      staggered,
      separateDirs,
      excludeDynamicSections,
      prefixWrites: first.filter((r) => r.usage?.cache_read_input_tokens === 0).length,
      sharedPrefixTokens: Math.max(...first.map((r) => r.usage?.cache_read_input_tokens ?? 0)),
      costUsd: orchestrator.totals.costUsd,
      cacheReadTokens: usage.cacheReadInputTokens,
      cacheWriteTokens: usage.cacheCreationInputTokens,
      wallMs,
      leaderTtftMs: (leader.respondedAt ?? leader.at) - leader.at,
      sendSpreadMs: Math.max(...first.map((r) => r.at)) - leader.at,
    };
  } finally {
    await orchestrator.close();
    await server.close();
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const usd = (value: number) => `$${value.toFixed(4)}`;
const k = (tokens: number) => `${(tokens / 1000).toFixed(0)}k`;
const mean = (runs: CacheRun[], pick: (run: CacheRun) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;

async function main(): Promise<void> {
  console.log(
    `cache stagger: ${TASKS} one-turn tasks of one agent at concurrency ${CONCURRENCY}, time to first token ${TTFT_MS} ms, ${ROUNDS} round(s)`,
  );
  const runs: CacheRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first, so that load drifting on a shared machine hits both alike.
    for (const staggered of round % 2 === 0 ? [false, true] : [true, false]) {
      const loadBefore = loadavg()[0]!.toFixed(1);
      const run = await runOnce(staggered);
      runs.push(run);
      console.log(
        `  ${(staggered ? "staggered" : "at once").padEnd(10)} prefix written ${String(run.prefixWrites).padStart(2)}×   ` +
          `first turns ${usd(run.costUsd)} (cache write ${k(run.cacheWriteTokens)}, read ${k(run.cacheReadTokens)} tokens)   ` +
          `wall ${s(run.wallMs)}   leader TTFT ${s(run.leaderTtftMs)}   first requests over ${s(run.sendSpreadMs)}   (load ${loadBefore})`,
      );
    }
  }
  const on = runs.filter((run) => run.staggered);
  const off = runs.filter((run) => !run.staggered);
  const saved = 1 - mean(on, (r) => r.costUsd) / mean(off, (r) => r.costUsd);
  const extraWall = mean(on, (r) => r.wallMs) - mean(off, (r) => r.wallMs);
  const ttft = mean(on, (r) => r.leaderTtftMs);
  const writes = Math.max(...on.map((r) => r.prefixWrites));
  // The shared prefix alone, at the API's ratios to the input price: written 1.25×, read 0.1×.
  const prefixUnits = (run: CacheRun) => run.prefixWrites * 1.25 + (TASKS - run.prefixWrites) * 0.1;
  const prefixSaved = 1 - mean(on, prefixUnits) / mean(off, prefixUnits);
  const shared = Math.max(...runs.map((r) => r.sharedPrefixTokens));
  console.log(
    `  staggered vs at once: prefix (${k(shared)} tokens) written at most ${writes}× (goal ≤ 2); ` +
      `first-turn cost ${(100 * saved).toFixed(0)} % less (goal ≥ 80 %), the shared prefix alone ${(100 * prefixSaved).toFixed(0)} % less (at 1.25×/0.1×); ` +
      `wall ${extraWall >= 0 ? "+" : "−"}${s(Math.abs(extraWall))} (goal ≤ leader TTFT ${s(ttft)})`,
  );
  console.log(`tasks in separate directories (as worktree tasks), staggered:`);
  const separate: CacheRun[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const exclude of round % 2 === 0 ? [false, true] : [true, false]) {
      const loadBefore = loadavg()[0]!.toFixed(1);
      const run = await runOnce(true, true, exclude);
      separate.push(run);
      console.log(
        `  ${(exclude ? "excludeDynamicSections" : "as is").padEnd(22)} prefix written ${String(run.prefixWrites).padStart(2)}×   ` +
          `shared prefix ${k(run.sharedPrefixTokens)} tokens   first turns ${usd(run.costUsd)} (cache write ${k(run.cacheWriteTokens)}, read ${k(run.cacheReadTokens)})   ` +
          `wall ${s(run.wallMs)}   (load ${loadBefore})`,
      );
    }
  }
  const withExclude = separate.filter((r) => r.excludeDynamicSections);
  const without = separate.filter((r) => !r.excludeDynamicSections);
  console.log(
    `  excludeDynamicSections vs as is: prefix written at most ${Math.max(...withExclude.map((r) => r.prefixWrites))}× vs ${Math.min(...without.map((r) => r.prefixWrites))}×; ` +
      `first-turn cost ${(100 * (1 - mean(withExclude, (r) => r.costUsd) / mean(without, (r) => r.costUsd))).toFixed(0)} % less`,
  );
}

await main();
