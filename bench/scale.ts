/**
 * One host against two (npm run bench:scale, after scale-sweep.ts): the same swarm through
 * `cadre run --redis` on one `cadre worker` process, then on two, each with
 * the same number of slots, against a rehearsal server whose model takes a
 * while to answer (as a real one does). Adding a host adds slots, so the run
 * should take about half as long, as far as the machine's CPUs allow; the
 * in-process run at one host's slots shows what going through Redis costs.
 *
 * Environment: BENCH_TASKS (default 16), BENCH_MODEL_MS (default 2000).
 * On one shared machine every host competes for the same CPUs: the ratio is
 * a floor for what separate machines give.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { offlineClaudeEnv } from "../src/rehearsal/env.ts";
import { type RehearsalServer, startRehearsalServer } from "../src/rehearsal/server.ts";
import { BIN, exited, startHosts, startRedis } from "./fleet.ts";

const TASKS = Number(process.env.BENCH_TASKS ?? 16) || 16;
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 2_000) || 2_000;
const SLOTS_PER_HOST = 2;
const SCRIPT = "bench";

interface Rig {
  dir: string;
  env: Record<string, string>;
  server: RehearsalServer;
  redisUrl: string;
  config: string;
}

/** Runs `cadre run` on the config with extra arguments; resolves with its wall time. */
async function timedRun(rig: Rig, label: string, extra: string[]): Promise<number> {
  const before = rig.server.outcomes.played;
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "run", rig.config, "--out", join(rig.dir, label), ...extra], {
    env: rig.env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const code = await exited(child);
  const wallMs = performance.now() - started;
  const played = rig.server.outcomes.played - before;
  if (code !== 0 || played !== TASKS) throw new Error(`${label}: exit ${code}, ${played} of ${TASKS} turns reached the model`);
  return wallMs;
}

/** Runs the swarm on `count` freshly started hosts; they are stopped afterwards. */
async function onHosts(rig: Rig, count: number): Promise<number> {
  const hosts = await startHosts(rig.redisUrl, count, SLOTS_PER_HOST, rig.env);
  try {
    return await timedRun(rig, `hosts-${count}`, ["--redis", rig.redisUrl, "--concurrency", String(2 * SLOTS_PER_HOST)]);
  } finally {
    await hosts.stop();
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "cadre-bench-scale-"));
  await mkdir(join(dir, "home"));
  const redis = await startRedis(dir);
  const server = await startRehearsalServer({ scripts: { [SCRIPT]: [{ text: "done {{prompt}}", delay_ms: MODEL_MS }] } });
  try {
    const config = join(dir, "swarm.yaml");
    const tasks = Array.from({ length: TASKS }, (_, i) => `  - { name: t${i + 1}, prompt: item ${i + 1} }`);
    await writeFile(config, ["name: scale", "tasks:", ...tasks, ""].join("\n"));
    const rig: Rig = {
      dir,
      // Hosts, and the in-process run, hand this to their claude workers: the scripted model, a private HOME.
      env: { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor(SCRIPT), home: join(dir, "home") }), TMPDIR: dir },
      server,
      redisUrl: redis.url,
      config,
    };
    console.log(
      `${TASKS} one-turn tasks, the scripted model answers after ${s(MODEL_MS)}, ${SLOTS_PER_HOST} slots per host (load ${loadavg()[0]!.toFixed(1)})`,
    );
    const local = await timedRun(rig, "in-process", ["--concurrency", String(SLOTS_PER_HOST)]);
    console.log(`  in-process, ${SLOTS_PER_HOST} at once      wall ${s(local).padStart(7)}`);
    const one = await onHosts(rig, 1);
    console.log(`  1 host (cadre worker)       wall ${s(one).padStart(7)}   1 host / in-process ${(one / local).toFixed(2)}`);
    const two = await onHosts(rig, 2);
    console.log(`  2 hosts                     wall ${s(two).padStart(7)}   2 hosts / 1 host ${(two / one).toFixed(2)}`);
    console.log(`peak model requests in flight: ${server.peakInFlight} (load ${loadavg()[0]!.toFixed(1)})`);
  } finally {
    await server.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
